import jdk.jfr.Recording;
import java.nio.file.Path;
public class First {
    static Object sink;
    public static void main(String[] a) throws Exception {
        for (int i = 0; i < 8000; i++) sink = new byte[65536]; // 500 MiB before the recording
        Recording r = new Recording();
        r.enable("jdk.ObjectAllocationSample").with("throttle", "1000/s");
        r.start();
        for (int i = 0; i < 160; i++) { sink = new byte[65536]; Thread.sleep(1); } // 10 MiB during it
        r.stop();
        r.dump(Path.of(a[0]));
    }
}
