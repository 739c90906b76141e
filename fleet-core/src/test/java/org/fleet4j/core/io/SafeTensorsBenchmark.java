package org.fleet4j.core.io;

import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Times writing and reading a checkpoint beside a raw FileChannel write (with fsync) and read of the same bytes.
 * Not a unit test: run by hand with a directory argument, see docs/performance/data.md.
 */
public final class SafeTensorsBenchmark {
    private static final int WARMUP = 2;
    private static final int REPEATS = 9;

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args.length > 0 ? args[0] : System.getProperty("java.io.tmpdir"));
        int megabytes = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        Map<String, Tensor> model = new LinkedHashMap<>();
        int tensors = 16;
        long floatsEach = megabytes * (1L << 20) / 4 / tensors;
        for (int i = 0; i < tensors; i++) {
            Tensor t = Tensor.zeros(DType.F32, floatsEach);
            for (long j = 0; j < floatsEach; j += 1024) {
                t.setFloat(j, i + j);
            }
            model.put("layer_" + i + ".w", t);
        }
        long bytes = tensors * floatsEach * 4;
        Path ckpt = dir.resolve("bench.safetensors");
        Path raw = dir.resolve("bench.raw");
        long[] write = new long[REPEATS];
        long[] rawWrite = new long[REPEATS];
        long[] read = new long[REPEATS];
        long[] rawRead = new long[REPEATS];
        for (int i = -WARMUP; i < REPEATS; i++) {
            // Alternate which of each pair runs first, so neither always finds the other's pages cached.
            boolean oursFirst = (i & 1) == 0;
            long w1 = oursFirst ? timeWrite(ckpt, model, i) : timeRawWrite(raw, model);
            long w2 = oursFirst ? timeRawWrite(raw, model) : timeWrite(ckpt, model, i);
            long r1 = oursFirst ? timeRead(ckpt, tensors) : timeRawRead(raw, model);
            long r2 = oursFirst ? timeRawRead(raw, model) : timeRead(ckpt, tensors);
            if (i >= 0) {
                write[i] = oursFirst ? w1 : w2;
                rawWrite[i] = oursFirst ? w2 : w1;
                read[i] = oursFirst ? r1 : r2;
                rawRead[i] = oursFirst ? r2 : r1;
            }
        }
        Files.deleteIfExists(ckpt);
        Files.deleteIfExists(raw);
        System.out.printf("%d MB in %d tensors, dir %s%n", megabytes, tensors, dir);
        System.out.printf("write: SafeTensors.write %.1f ms (%.2f GB/s), raw write+fsync %.1f ms, ratio %.2f%n",
                median(write) / 1e6, bytes / median(write), median(rawWrite) / 1e6, median(write) / median(rawWrite));
        System.out.printf("read: SafeTensors.read %.1f ms (%.2f GB/s), raw read into tensors %.1f ms, ratio %.2f%n",
                median(read) / 1e6, bytes / median(read), median(rawRead) / 1e6, median(read) / median(rawRead));
    }

    private static long timeWrite(Path file, Map<String, Tensor> model, int step) {
        long t0 = System.nanoTime();
        SafeTensors.write(file, model, Map.of("step", Integer.toString(step)));
        return System.nanoTime() - t0;
    }

    private static long timeRawWrite(Path file, Map<String, Tensor> model) throws IOException {
        long t0 = System.nanoTime();
        writeRaw(file, model);
        return System.nanoTime() - t0;
    }

    private static long timeRead(Path file, int tensors) {
        long t0 = System.nanoTime();
        Map<String, Tensor> back = SafeTensors.read(file);
        long t = System.nanoTime() - t0;
        if (back.size() != tensors) {
            throw new AssertionError("read " + back.size() + " tensors");
        }
        return t;
    }

    private static long timeRawRead(Path file, Map<String, Tensor> model) throws IOException {
        long t0 = System.nanoTime();
        readRaw(file, model);
        return System.nanoTime() - t0;
    }

    private static void writeRaw(Path file, Map<String, Tensor> model) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            for (Tensor t : model.values()) {
                ByteBuffer b = t.segment().asByteBuffer();
                while (b.hasRemaining()) {
                    ch.write(b);
                }
            }
            ch.force(true);
        }
    }

    private static void readRaw(Path file, Map<String, Tensor> shapes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            for (Tensor like : shapes.values()) {
                Tensor t = Tensor.zeros(like.dtype(), like.shape());
                ByteBuffer b = t.segment().asByteBuffer();
                while (b.hasRemaining()) {
                    if (ch.read(b) < 0) {
                        throw new IOException(file + " ended early");
                    }
                }
            }
        }
    }

    private static double median(long[] values) {
        long[] s = values.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
