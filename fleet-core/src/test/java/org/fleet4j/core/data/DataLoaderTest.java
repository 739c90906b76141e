package org.fleet4j.core.data;

import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DataLoaderTest {
    /** Row i holds id = i and x = [10i, 10i+1, 10i+2], so every gathered row shows where it came from. */
    private static Dataset numbered(int n) {
        Tensor id = Tensor.zeros(DType.I64, n, 1);
        Tensor x = Tensor.zeros(DType.F32, n, 3);
        for (int i = 0; i < n; i++) {
            id.setLong(i, i);
            for (int j = 0; j < 3; j++) {
                x.set(10f * i + j, i, j);
            }
        }
        return new TensorDataset(List.of("id", "x"), List.of(id, x));
    }

    /** The dataset rows of each step's batch, checking that every field's row agrees with the recorded index. */
    private static List<int[]> rowsOfEpoch(DataLoader loader, long epoch) {
        List<int[]> steps = new ArrayList<>();
        for (Batch b : loader.epoch(epoch)) {
            int[] rows = new int[b.size()];
            for (int r = 0; r < b.size(); r++) {
                rows[r] = b.sampleIndex(r);
                assertEquals(rows[r], b.field("id").getLong(r));
                for (int j = 0; j < 3; j++) {
                    assertEquals(10f * rows[r] + j, b.field(1).get(r, j));
                }
            }
            steps.add(rows);
        }
        assertEquals(loader.stepsPerEpoch(), steps.size());
        return steps;
    }

    @Test
    void shardedRanksTogetherSeeExactlyTheUnshardedBatch() {
        for (int n : new int[]{100, 103}) {
            Dataset data = numbered(n);
            for (int globalBatch : new int[]{8, 10, 7}) {
                for (boolean dropLast : new boolean[]{false, true}) {
                    DataLoader single = DataLoader.builder(data, globalBatch).shuffle(99).dropLast(dropLast).build();
                    for (int world = 1; world <= 4; world++) {
                        for (long epoch = 0; epoch < 2; epoch++) {
                            List<int[]> whole = rowsOfEpoch(single, epoch);
                            List<List<int[]>> perRank = new ArrayList<>();
                            for (int rank = 0; rank < world; rank++) {
                                DataLoader shard = DataLoader.builder(data, globalBatch).shuffle(99).dropLast(dropLast)
                                        .shard(rank, world).build();
                                assertEquals(single.stepsPerEpoch(), shard.stepsPerEpoch());
                                perRank.add(rowsOfEpoch(shard, epoch));
                            }
                            String where = "n=" + n + " B=" + globalBatch + " N=" + world + " dropLast=" + dropLast + " epoch=" + epoch;
                            for (int step = 0; step < whole.size(); step++) {
                                int b = whole.get(step).length;
                                int[] joined = new int[0];
                                for (int rank = 0; rank < world; rank++) {
                                    int[] share = perRank.get(rank).get(step);
                                    // The first b % N ranks get one row more than the rest.
                                    assertEquals(b / world + (rank < b % world ? 1 : 0), share.length, where + " rank " + rank);
                                    joined = concat(joined, share);
                                }
                                assertArrayEquals(whole.get(step), joined, where + " step " + step);
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void anEpochVisitsEverySampleOnceAndShufflesReproducibly() {
        Dataset data = numbered(50);
        DataLoader a = DataLoader.builder(data, 8).shuffle(7).build();
        DataLoader b = DataLoader.builder(data, 8).shuffle(7).build();
        int[] epoch0 = flatten(rowsOfEpoch(a, 0));
        int[] sorted = epoch0.clone();
        Arrays.sort(sorted);
        int[] all = new int[50];
        Arrays.setAll(all, i -> i);
        assertArrayEquals(all, sorted);
        assertFalse(Arrays.equals(all, epoch0), "shuffled order equals dataset order");
        // The order depends only on seed and epoch: not on which epochs a loader iterated before.
        int[] epoch1 = flatten(rowsOfEpoch(a, 1));
        assertArrayEquals(epoch1, flatten(rowsOfEpoch(b, 1)));
        assertArrayEquals(epoch0, flatten(rowsOfEpoch(b, 0)));
        assertArrayEquals(epoch0, flatten(rowsOfEpoch(a, 0)));
        assertFalse(Arrays.equals(epoch0, epoch1), "epochs 0 and 1 have the same order");
        assertNotEquals(Arrays.toString(epoch0), Arrays.toString(flatten(rowsOfEpoch(DataLoader.builder(data, 8).shuffle(8).build(), 0))));
    }

    @Test
    void shuffleOrderIsPinned() {
        // Ranks on different machines and later releases must agree on the order; a change here breaks resumed jobs.
        int[] order = new int[10];
        EpochPermutation.fill(order, 42, 0);
        assertArrayEquals(new int[]{5, 1, 4, 8, 6, 3, 9, 2, 0, 7}, order);
        EpochPermutation.fill(order, 42, 3);
        assertArrayEquals(new int[]{4, 7, 1, 2, 8, 9, 3, 0, 5, 6}, order);
    }

    @Test
    void withoutShuffleBatchesFollowDatasetOrder() {
        List<int[]> steps = rowsOfEpoch(DataLoader.builder(numbered(10), 4).build(), 5);
        assertArrayEquals(new int[]{0, 1, 2, 3}, steps.get(0));
        assertArrayEquals(new int[]{4, 5, 6, 7}, steps.get(1));
        assertArrayEquals(new int[]{8, 9}, steps.get(2));
    }

    @Test
    void dropLastSkipsTheShortFinalBatch() {
        Dataset data = numbered(103);
        DataLoader keep = DataLoader.builder(data, 10).shuffle(1).build();
        DataLoader drop = DataLoader.builder(data, 10).shuffle(1).dropLast(true).build();
        assertEquals(11, keep.stepsPerEpoch());
        assertEquals(10, drop.stepsPerEpoch());
        List<int[]> kept = rowsOfEpoch(keep, 0);
        assertEquals(3, kept.get(10).length);
        List<int[]> dropped = rowsOfEpoch(drop, 0);
        assertTrue(dropped.stream().allMatch(r -> r.length == 10));
        assertArrayEquals(flatten(kept.subList(0, 10)), flatten(dropped));
        // 4 ranks share the final 3 samples 1, 1, 1, 0: rank 3 gets an empty batch but takes the step too.
        DataLoader rank3 = DataLoader.builder(data, 10).shuffle(1).shard(3, 4).build();
        List<int[]> steps = rowsOfEpoch(rank3, 0);
        assertEquals(11, steps.size());
        assertEquals(2, steps.get(0).length);
        assertEquals(0, steps.get(10).length);
    }

    @Test
    void batchesReuseTheirBuffers() {
        DataLoader loader = DataLoader.builder(numbered(30), 8).shuffle(3).shard(1, 3).build();
        Iterator<Batch> it = loader.epoch(0).iterator();
        Batch first = it.next();
        Tensor x = first.field("x");
        assertEquals(3, loader.localBatchSize());
        assertArrayEquals(new long[]{3, 3}, x.shape());
        Batch second = it.next();
        assertSame(first, second);
        assertSame(x, second.field("x"));
        assertEquals(1, second.step());
    }

    @Test
    void startingAnotherEpochInvalidatesTheFirstIteration() {
        DataLoader loader = DataLoader.builder(numbered(30), 8).shuffle(3).build();
        Iterator<Batch> first = loader.epoch(0).iterator();
        first.next();
        loader.epoch(1).iterator();
        assertThrows(ConcurrentModificationException.class, first::next);
    }

    @Test
    void badSettingsAreExplained() {
        Dataset data = numbered(10);
        assertEquals("rank 4 is not in a world of 4 ranks", assertThrows(IllegalArgumentException.class,
                () -> DataLoader.builder(data, 8).shard(4, 4).build()).getMessage());
        assertEquals("global batch size 2 is smaller than the world size 4: ranks 2..3 would never get a sample",
                assertThrows(IllegalArgumentException.class, () -> DataLoader.builder(data, 2).shard(0, 4).build()).getMessage());
        assertEquals("dataset has 10 samples, fewer than one global batch of 16; with drop_last no step would run",
                assertThrows(IllegalArgumentException.class, () -> DataLoader.builder(data, 16).dropLast(true).build()).getMessage());
        assertThrows(IllegalArgumentException.class, () -> DataLoader.builder(data, 0).build());
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static int[] flatten(List<int[]> steps) {
        int[] out = new int[0];
        for (int[] s : steps) {
            out = concat(out, s);
        }
        return out;
    }
}
