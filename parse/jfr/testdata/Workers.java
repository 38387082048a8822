// Workers starts four threads that each allocate 100,000 byte[1024] as
// fast as they can (about 0.1 s), waits for them, and prints what they
// allocated as the JVM counted it: a recording too short for JFR's
// throttle to settle (parse/jfr's stalledTails).
import java.util.concurrent.atomic.AtomicLong;

public class Workers {
  static volatile Object sink;

  public static void main(String[] a) throws Exception {
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    AtomicLong total = new AtomicLong();
    Thread[] ts = new Thread[4];
    for (int i = 0; i < 4; i++) {
      ts[i] = new Thread(() -> {
        long before = mx.getCurrentThreadAllocatedBytes();
        for (int j = 0; j < 100000; j++) sink = new byte[1024];
        total.addAndGet(mx.getCurrentThreadAllocatedBytes() - before);
      }, "worker-" + i);
      ts[i].start();
    }
    for (Thread t : ts) t.join();
    System.out.println("workers allocated " + total.get() + " bytes");
  }
}
