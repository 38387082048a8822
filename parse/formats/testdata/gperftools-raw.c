#include <stdlib.h>
#include <stdio.h>
void *keep[100000];
__attribute__((noinline)) void site_a(int i){ keep[i] = malloc(1000); }
__attribute__((noinline)) void site_b(int i){ keep[i] = malloc(100); }
int main(){ for(int i=0;i<100000;i++){ if(i%2) site_a(i); else site_b(i);} printf("%p\n", keep[5]); return 0; }
