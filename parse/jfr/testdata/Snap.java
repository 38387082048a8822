import java.nio.file.*;
import java.util.*;
import jdk.jfr.*;

// Two recordings, one after the other, of one JVM: each dumped to
// ARG0.jfr and ARG1.jfr. The leak profiler's sampled objects belong to
// the JVM, not to a recording: the second dump lists again those of the
// first that are still alive.
public class Snap {
  static List<Object> keep = new ArrayList<>();
  static Object big(int n) { return new byte[n]; }
  public static void main(String[] a) throws Exception {
    Configuration c = Configuration.create(Paths.get(a[1]));
    for (int r = 0; r < 2; r++) {
      Recording rec = new Recording(c);
      rec.enable("jdk.JVMInformation").with("period", "beginChunk");
      rec.start();
      long end = System.currentTimeMillis() + 600;
      while (System.currentTimeMillis() < end) {
        keep.add(big(50000));
        if (keep.size() > 2000) keep.subList(0, 1000).clear();
        Thread.sleep(1);
      }
      rec.dump(Paths.get(a[0] + r + ".jfr"));
      rec.close();
    }
  }
}
