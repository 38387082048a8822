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
// Workers (started after the recording, so that no bytes from before it
// fall into a first sample):
//   mixer:   a stationary mix: per round 64 x small (1 KiB byte[]),
//            16 x mid (4 KiB int[]), 1 x big (512 KiB long[]).
//   phases:  phase1 (64 KiB byte[]) then phase2 (64 KiB int[]): 128 MiB then
//            200 MiB, the scenario where weights smear from one phase
//            into the next.
//   twin-1, twin-2: the same method (4 KiB byte[]) on two threads.
// The first argument scales every count (1.0: about 830 MiB in all);
// -Dlab.rotate=true starts a second recording midway, so that the JVM
// rotates chunks and the recording file has several.
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public class Lab {
    static final Object[] RING = new Object[256];
    static volatile int slot;

    static void keep(Object o) {
        int i = slot;
        RING[i & 255] = o;
        slot = i + 1;
    }

    // Sites. Bytes per call in the comments (16-byte array header).
    static void small() { keep(new byte[1008]); }        // 1024
    static void mid() { keep(new int[1020]); }           // 4096
    static void big() { keep(new long[65534]); }         // 524288
    static void phase1() { keep(new byte[65520]); }      // 65536
    static void phase2() { keep(new int[16380]); }       // 65536
    static void twin() { keep(new byte[4080]); }         // 4096

    static final Map<String, long[]> truth = new LinkedHashMap<>();

    static synchronized void add(String site, String thread, long calls, long size) {
        truth.put(site + "@" + thread, new long[] {calls * size, calls});
    }

    static long allocated() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        return mx.getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    static final Map<String, long[]> measured = new LinkedHashMap<>();

    static synchronized void measure(String thread, long bytes, long expected) {
        measured.put(thread, new long[] {bytes, expected});
    }

    public static void main(String[] args) throws Exception {
        double scale = args.length > 0 ? Double.parseDouble(args[0]) : 1.0;
        long rounds = (long) (480 * scale);       // mixer: 300 MiB at scale 1
        long p1 = (long) (2048 * scale);          // 128 MiB
        long p2 = (long) (3200 * scale);          // 200 MiB
        long tw = (long) (25600 * scale);         // 100 MiB per twin
        List<Thread> ts = new ArrayList<>();
        ts.add(new Thread(() -> {
            long a0 = allocated();
            for (long r = 0; r < rounds; r++) {
                for (int i = 0; i < 16; i++) {
                    small(); small(); small(); small();
                    mid();
                }
                big();
            }
            long got = allocated() - a0;
            add("Lab.small", "mixer", rounds * 64, 1024);
            add("Lab.mid", "mixer", rounds * 16, 4096);
            add("Lab.big", "mixer", rounds, 524288);
            measure("mixer", got, rounds * (64 * 1024 + 16 * 4096 + 524288));
        }, "mixer"));
        ts.add(new Thread(() -> {
            long a0 = allocated();
            for (long i = 0; i < p1; i++) phase1();
            for (long i = 0; i < p2; i++) phase2();
            long got = allocated() - a0;
            add("Lab.phase1", "phases", p1, 65536);
            add("Lab.phase2", "phases", p2, 65536);
            measure("phases", got, (p1 + p2) * 65536);
        }, "phases"));
        for (String name : new String[] {"twin-1", "twin-2"}) {
            ts.add(new Thread(() -> {
                long a0 = allocated();
                for (long i = 0; i < tw; i++) twin();
                long got = allocated() - a0;
                add("Lab.twin", name, tw, 4096);
                measure(name, got, tw * 4096);
            }, name));
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
