package org.fleet4j.fleet;

import java.util.Map;
import java.util.TreeMap;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.kernel.DeviceKind;
import org.fleet4j.core.kernel.KernelRegistry;
import org.fleet4j.core.kernel.Placement;

/**
 * Where each op of a compiled program would run on a device, from the kernel registry, for the dry run of a GPU world:
 * one line per op type and placement with the count, the host fallbacks with their declared reasons, and the ops that
 * could not run at all. Nothing of CUDA is loaded.
 */
final class OpPlacements {
    private OpPlacements() {
    }

    static String describe(Program main, Program startup, String device) {
        DeviceKind kind = DeviceKind.parse(device);
        Map<String, Integer> counts = new TreeMap<>();
        Map<String, Placement> placements = new TreeMap<>();
        for (Program p : new Program[]{startup, main}) {
            for (Op op : p.globalBlock().ops()) {
                Placement where = KernelRegistry.placement(kind, op);
                String key = op.type() + "\u0000" + where.kind() + "\u0000" + where.reason();
                counts.merge(key, 1, Integer::sum);
                placements.put(key, where);
            }
        }
        StringBuilder sb = new StringBuilder("fleet: where the ops would run on " + kind.displayName() + ":\n");
        for (Placement.Kind k : Placement.Kind.values()) {
            counts.forEach((key, n) -> {
                Placement where = placements.get(key);
                if (where.kind() == k) {
                    String type = key.substring(0, key.indexOf('\u0000'));
                    sb.append(String.format("  %-14s %-34s x%-4d %s%n", switch (k) {
                        case DEVICE -> kind.displayName();
                        case HOST_FALLBACK -> "host fallback";
                        case NONE -> "CANNOT RUN";
                    }, type, n, where.reason()));
                }
            });
        }
        return sb.toString();
    }
}
