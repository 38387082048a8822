// Lab allocates known bytes from known methods, on known threads and in
// phases, while a JFR recording runs, and prints what it allocated (the
// truth heapest's JFR estimates are checked against) as JSON on stdout.
//
// Every site allocates one array per call, of one size, and keeps it in a
// small ring so that the JIT cannot remove the allocation. Array sizes are
// those of a 64-bit JVM with compressed class pointers (a 16-byte header,
// sizes multiples of 8); the program checks them against the bytes
// ThreadMXBean says each worker thread allocated.
//
// Each worker is paced (a given number of bytes per second, sleeping in
// between), so that a run lasts long enough for the JVM's sampling
// throttle to settle, and does, in order:
//   warm:    a warm-up site, the same on every worker;
//   its own work (below);
//   cool:    a cool-down site, so that the bytes after the last sample of
//            the work go to a site that follows it, as in a program that
//            goes on running.
// The work:
//   mixer:   a stationary mix: per round 64 x small (1 KiB byte[]),
//            16 x mid (4 KiB int[]), 1 x big (512 KiB long[]).
//   phases:  phase1 (64 KiB byte[]) then phase2 (64 KiB int[]): 128 MiB
//            then 200 MiB, the scenario where weights smear from one phase
//            into the next.
//   twin-1, twin-2: the same method (4 KiB byte[]) on two threads.
// Arguments: a scale for every count (1.0: about 960 MiB in all), and the
// pace of each worker in MiB per second (default 100). -Dlab.rotate=true
// starts a second recording midway, so that the JVM rotates chunks and the
// recording file has several.
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

public class Lab {
    static final Object[] RING = new Object[256];
    static volatile int slot;

    static void keep(Object o) {
        int i = slot;
        RING[i & 255] = o;
        slot = i + 1;
    }

    // Sites. Bytes per call in the comments (16-byte array header).
    static void warm() { keep(new byte[2032]); }         // 2048
    static void small() { keep(new byte[1008]); }        // 1024
    static void mid() { keep(new int[1020]); }           // 4096
    static void big() { keep(new long[65534]); }         // 524288
    static void phase1() { keep(new byte[65520]); }      // 65536
    static void phase2() { keep(new int[16380]); }       // 65536
    static void twin() { keep(new byte[4080]); }         // 4096
    static void cool() { keep(new char[1016]); }         // 2048

    static final Map<String, long[]> truth = new LinkedHashMap<>();
    static final Map<String, long[]> measured = new LinkedHashMap<>();

    static synchronized void add(String site, String thread, long calls, long size) {
        long[] t = truth.computeIfAbsent(site + "@" + thread, k -> new long[2]);
        t[0] += calls * size;
        t[1] += calls;
    }

    static synchronized void measure(String thread, long bytes, long expected) {
        measured.put(thread, new long[] {bytes, expected});
    }

    static long allocated() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        return mx.getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    static double scale = 1.0;
    static long pace = 100L << 20; // bytes per second per worker

    // Pacer keeps a worker at the pace: after every MiB it sleeps until
    // the time at which that many bytes are due.
    static final class Pacer {
        final long start = System.nanoTime();
        long bytes, next = 1 << 20;

        void add(long n) {
            bytes += n;
            if (bytes < next) {
                return;
            }
            next = bytes + (1 << 20);
            long due = start + (long) (bytes * 1e9 / pace);
            long wait = due - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
        }
    }

    interface Work {
        long run(Pacer p, String thread);
    }

    // worker runs warm, the work, then cool, and checks the bytes.
    static Thread worker(String name, Work work) {
        return new Thread(() -> {
            long a0 = allocated();
            Pacer p = new Pacer();
            long warmCalls = (long) (20480 * scale); // 40 MiB
            for (long i = 0; i < warmCalls; i++) { warm(); p.add(2048); }
            long expected = work.run(p, name);
            long coolCalls = (long) (20480 * scale); // 40 MiB
            for (long i = 0; i < coolCalls; i++) { cool(); p.add(2048); }
            long got = allocated() - a0;
            add("Lab.warm", name, warmCalls, 2048);
            add("Lab.cool", name, coolCalls, 2048);
            measure(name, got, expected + (warmCalls + coolCalls) * 2048);
        }, name);
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0) scale = Double.parseDouble(args[0]);
        if (args.length > 1) pace = (long) (Double.parseDouble(args[1]) * (1 << 20));
        long rounds = (long) (480 * scale);       // mixer: 300 MiB
        long p1 = (long) (2048 * scale);          // 128 MiB
        long p2 = (long) (3200 * scale);          // 200 MiB
        long tw = (long) (25600 * scale);         // 100 MiB per twin
        List<Thread> ts = new ArrayList<>();
        ts.add(worker("mixer", (p, name) -> {
            for (long r = 0; r < rounds; r++) {
                for (int i = 0; i < 16; i++) {
                    small(); small(); small(); small();
                    mid();
                    p.add(4 * 1024 + 4096);
                }
                big();
                p.add(524288);
            }
            add("Lab.small", name, rounds * 64, 1024);
            add("Lab.mid", name, rounds * 16, 4096);
            add("Lab.big", name, rounds, 524288);
            return rounds * (64 * 1024 + 16 * 4096 + 524288);
        }));
        ts.add(worker("phases", (p, name) -> {
            for (long i = 0; i < p1; i++) { phase1(); p.add(65536); }
            for (long i = 0; i < p2; i++) { phase2(); p.add(65536); }
            add("Lab.phase1", name, p1, 65536);
            add("Lab.phase2", name, p2, 65536);
            return (p1 + p2) * 65536;
        }));
        for (String tn : new String[] {"twin-1", "twin-2"}) {
            ts.add(worker(tn, (p, name) -> {
                for (long i = 0; i < tw; i++) { twin(); p.add(4096); }
                add("Lab.twin", name, tw, 4096);
                return tw * 4096;
            }));
        }
        for (Thread t : ts) t.start();
        if (Boolean.getBoolean("lab.rotate")) {
            // Starting a second recording makes the JVM start a new chunk:
            // the recording file then has several.
            Thread.sleep(100);
            new jdk.jfr.Recording().start();
        }
        for (Thread t : ts) t.join();
        StringBuilder b = new StringBuilder("{\"sites\":[");
        String sep = "";
        for (Map.Entry<String, long[]> e : truth.entrySet()) {
            String[] k = e.getKey().split("@");
            b.append(sep).append(String.format("{\"func\":\"%s\",\"thread\":\"%s\",\"bytes\":%d,\"calls\":%d}",
                    k[0], k[1], e.getValue()[0], e.getValue()[1]));
            sep = ",";
        }
        b.append("],\"threads\":[");
        sep = "";
        for (Map.Entry<String, long[]> e : measured.entrySet()) {
            b.append(sep).append(String.format("{\"thread\":\"%s\",\"allocated\":%d,\"expected\":%d}",
                    e.getKey(), e.getValue()[0], e.getValue()[1]));
            sep = ",";
        }
        b.append("]}");
        System.out.println(b);
    }
}
