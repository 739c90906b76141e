package org.fleet4j.strategy.rules;

import org.fleet4j.strategy.schema.StrategyException;
import org.fleet4j.text.Quoted;

/**
 * The machines a job runs on: {@code nodes} hosts with {@code ranksPerNode} worker processes each,
 * on device "cpu" or "gpu". The effective strategy depends on it.
 */
public record World(int nodes, int ranksPerNode, String device) {
    public World {
        if (nodes < 1) {
            throw new StrategyException("nnodes: " + nodes + " is out of range: must be at least 1");
        }
        if (ranksPerNode < 1) {
            throw new StrategyException("nproc_per_node: " + ranksPerNode + " is out of range: must be at least 1");
        }
        if (!"cpu".equals(device) && !"gpu".equals(device)) {
            throw new StrategyException("device: " + Quoted.of(device) + " is not allowed; allowed: cpu, gpu");
        }
    }

    /** The number of workers: nodes * ranksPerNode. */
    public int size() {
        return nodes * ranksPerNode;
    }

    public boolean onGpu() {
        return device.equals("gpu");
    }

    /** "2 nodes x 4 ranks per node = 8 ranks on gpu". */
    public String describe() {
        return nodes + (nodes == 1 ? " node" : " nodes") + " x " + ranksPerNode
                + (ranksPerNode == 1 ? " rank" : " ranks") + " per node = " + size()
                + (size() == 1 ? " rank" : " ranks") + " on " + device;
    }
}
