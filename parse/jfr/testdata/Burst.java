// Burst allocates 208 MB from main in well under a second (200,000
// byte[1024] from under 100 frames of recursion) and prints what the
// JVM counted, for a recording whose throttle stalls after its first
// window of samples (parse/jfr's stalledTails).
public class Burst {
  static Object sink;

  static void rec(int d) {
    if (d == 0) {
      for (int i = 0; i < 200000; i++) sink = new byte[1024];
      return;
    }
    rec(d - 1);
  }

  public static void main(String[] a) {
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long before = mx.getCurrentThreadAllocatedBytes();
    long start = System.nanoTime();
    rec(20);
    long after = mx.getCurrentThreadAllocatedBytes();
    System.out.println("main allocated " + (after - before) + " bytes in rec in " + (System.nanoTime() - start) / 1000000 + " ms");
  }
}
