import java.util.*;
public class Keep {
  static List<Object> keep = new ArrayList<>();
  static Object big(int n) { return new byte[n]; }
  public static void main(String[] a) throws Exception {
    long end = System.currentTimeMillis() + 4000;
    while (System.currentTimeMillis() < end) {
      keep.add(big(50000));
      if (keep.size() > 2000) keep.subList(0, 1000).clear();
      Thread.sleep(1);
    }
  }
}
