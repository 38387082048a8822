// prefork: a pre-fork server's shape. The parent allocates, then forks
// workers without exec; each worker allocates its own share and writes a
// jemalloc dump under jemalloc's own file name (prof_prefix.PID.SEQ.m0.heap).
// The workers keep the parent's mappings at the same addresses: only the
// pids in the names tell their dumps apart.
//
// usage: prefork WORKERS   (with MALLOC_CONF=prof:true,prof_prefix:DIR/jeprof)
// prints one line per worker: the bytes it allocated at work_site.
#include <jemalloc/jemalloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void *keep[4096]; // not static: the allocations must happen

__attribute__((noinline)) static void work_site(int n, size_t size)
{
	for (int i = 0; i < n; i++) {
		keep[i] = malloc(size);
		((char *)keep[i])[0] = 1;
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: prefork WORKERS\n");
		return 2;
	}
	int workers = atoi(argv[1]);
	void *shared = malloc(1 << 20); // the parent's, inherited by every worker
	((char *)shared)[0] = 1;
	for (int w = 0; w < workers; w++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			int n = 1000 + 500 * w;
			work_site(n, 4096);
			if (mallctl("prof.dump", NULL, NULL, NULL, 0) != 0) {
				fprintf(stderr, "prof.dump failed\n");
				_exit(1);
			}
			printf("%d %zu\n", (int)getpid(), (size_t)n * 4096);
			fflush(stdout);
			_exit(0);
		}
		int status;
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "worker %d failed\n", w);
			return 1;
		}
	}
	return 0;
}
