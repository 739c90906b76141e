package org.fleet4j.core.ir;

import java.util.HashMap;
import java.util.Map;

/**
 * A static program: one global block of vars and ops (Paddle's Program). Printing it shows exactly what will
 * run; {@link ProgramJson} serialises it. Programs are built with the layers API, extended by autodiff and
 * optimizers, and rewritten by compiler passes.
 */
public final class Program {
    private final Block global = new Block(this);
    private final Map<String, Integer> nameCounters = new HashMap<>();
    private long randomSeed;
    private Program startup;
    private long version;

    public Block globalBlock() {
        return global;
    }

    /** Seed from which every random op of this program derives its own, so runs are reproducible. */
    public long randomSeed() {
        return randomSeed;
    }

    public Program setRandomSeed(long seed) {
        this.randomSeed = seed;
        touch();
        return this;
    }

    /** The program that initialises this one's persistable vars, when the layers API built them together. */
    public Program startupProgram() {
        return startup;
    }

    public Program setStartupProgram(Program startup) {
        this.startup = startup;
        return this;
    }

    /** Changes whenever the program does; executors use it to know when a cached plan is stale. */
    public long version() {
        return version;
    }

    void touch() {
        version++;
    }

    /** "fc_0", "fc_1", ... : a name not used before in this program. */
    public String uniqueName(String prefix) {
        while (true) {
            int n = nameCounters.merge(prefix, 1, Integer::sum) - 1;
            String name = prefix + "_" + n;
            if (!global.hasVar(name)) {
                return name;
            }
        }
    }

    public Program copy() {
        Program p = new Program();
        p.global.copyFrom(global);
        p.nameCounters.putAll(nameCounters);
        p.randomSeed = randomSeed;
        return p;
    }

    /** Same vars, ops, attributes and seed (names included). */
    public boolean sameAs(Program o) {
        return randomSeed == o.randomSeed && global.sameAs(o.global);
    }

    Map<String, Integer> nameCounters() {
        return nameCounters;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        sb.append("program (seed ").append(randomSeed).append(", ").append(global.vars().size()).append(" vars, ")
                .append(global.ops().size()).append(" ops)\n");
        sb.append("vars:\n");
        for (Var v : global.vars()) {
            sb.append("  ").append(v).append('\n');
        }
        sb.append("ops:\n");
        int i = 0;
        for (Op op : global.ops()) {
            sb.append(String.format("  #%-3d ", i++)).append(op).append('\n');
        }
        return sb.toString();
    }
}
