package org.fleet4j.core.ops.fused;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ops.BufferPlacements;
import org.fleet4j.core.ops.Kernel;
import org.fleet4j.core.ops.KernelArgs;
import org.fleet4j.core.ops.OpLibrary;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * {@code gather_bucket}: makes gradients X views into one contiguous bucket (Out = the same vars, Bucket = the
 * buffer) so one collective can reduce them all. A gradient already bound to its view was written in place by its
 * producer (kernels reuse the output tensor in the frame) and costs nothing; one that is not (the first step, or a
 * kernel that outputs a view of something else) is copied in once and rebound to its view. The bucket's memory comes
 * from the attribute {@code placement} (the job's {@link BufferPlacements}; empty: ordinary memory), so that Fleet can put it
 * where the ring's process group reduces it fastest.
 */
@AutoService(OpLibrary.class)
public final class BucketOps implements OpLibrary {
    public static final String GATHER = "gather_bucket";
    public static final String PLACEMENT = "placement";

    /**
     * Told the bytes of every gradient copied into its bucket (one its producer did not write in place), where the
     * job's {@link org.fleet4j.core.ops.ExecContext} has one as a service: none after the first step shows that the
     * gradients stay in their buckets.
     */
    @FunctionalInterface
    public interface CopyListener {
        void copied(long bytes);
    }

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(GATHER)
                .variadicIn("X").out("Out", "Bucket")
                .attr(PLACEMENT, AttrType.STRING, "")
                .shape(ctx -> {
                    long total = 0;
                    for (int j = 0; j < ctx.count("X"); j++) {
                        if (ctx.input("X", j).dtype() != ctx.dtype("X")) {
                            throw ctx.fail("every gradient of a bucket must have one dtype");
                        }
                        long n = Shapes.knownNumel(ctx.shape("X", j));
                        if (n < 0) {
                            throw ctx.fail(ctx.op().input("X").get(j) + " has an unknown dimension; buckets hold fixed shapes");
                        }
                        total += n;
                    }
                    ctx.set("Bucket", ctx.dtype("X"), total);
                })
                .keepsOutputs()
                .kernel((op, context) -> new Gather(context.placements(),
                        context.service(CopyListener.class).orElse(bytes -> { })))
                .build());
        return specs;
    }

    static final class Gather implements Kernel {
        private final BufferPlacements placements;
        private final CopyListener copies;
        private Tensor bucket;
        private Tensor[] views;

        Gather(BufferPlacements placements, CopyListener copies) {
            this.placements = placements;
            this.copies = copies;
        }

        @Override
        public void run(KernelArgs a) {
            int n = a.inCount("X");
            if (!fits(a, n)) {
                allocate(a, n);
            }
            for (int j = 0; j < n; j++) {
                Tensor g = a.in("X", j);
                if (g != views[j]) {
                    views[j].copyFrom(g);
                    copies.copied(g.byteSize());
                    a.setOut("Out", j, views[j]);
                }
            }
            a.setOut("Bucket", bucket);
        }

        private boolean fits(KernelArgs a, int n) {
            if (views == null || views.length != n) {
                return false;
            }
            for (int j = 0; j < n; j++) {
                Tensor g = a.in("X", j);
                if (g.dtype() != bucket.dtype() || !views[j].hasShape(g.shape())) {
                    return false;
                }
            }
            return true;
        }

        private void allocate(KernelArgs a, int n) {
            long total = 0;
            for (int j = 0; j < n; j++) {
                Tensor g = a.in("X", j);
                if (g.dtype() != a.in("X", 0).dtype()) {
                    throw new IrException(GATHER + ": gradient " + a.op().input("X").get(j) + " is " + g.dtype().displayName()
                            + ", the bucket is " + a.in("X", 0).dtype().displayName());
                }
                total += g.numel();
            }
            bucket = placements.zeros(a.op().stringAttr(PLACEMENT), a.op().out("Bucket"), a.in("X", 0).dtype(), total);
            views = new Tensor[n];
            long off = 0;
            for (int j = 0; j < n; j++) {
                Tensor g = a.in("X", j);
                views[j] = bucket.rows(off, off + g.numel()).reshape(g.shape());
                off += g.numel();
            }
        }
    }
}
