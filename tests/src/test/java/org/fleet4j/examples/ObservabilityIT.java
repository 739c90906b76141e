package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.fleet.metrics.LossCurve;
import org.fleet4j.fleet.tensorboard.TfEventsPy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a user watching a job sees, through the real bin/fleetrun: the TensorBoard event file of {@code mnist
 * --tensorboard} (read back by tfevents.py, a reader written apart from the writer), and the launcher's Prometheus
 * endpoint scraped while two ranks train.
 */
class ObservabilityIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(4);
    private static final Duration SCRAPE_PACE = Duration.ofMillis(200);
    private static final Pattern SAMPLE = Pattern.compile("^(\\w+)\\{(\\w+)=\"(\\d+)\"} (\\S+)$", Pattern.MULTILINE);

    @TempDir
    Path work;

    @Test
    void twoRanksOfMnistGiveTensorBoardRankZerosLossOfEveryStepAndItsCommunicationTimes() throws Exception {
        Path tensorboard = work.resolve("tb");
        FleetRunJob job = FleetRunJob.start(work.resolve("job"), 2, "mnist", "--steps", "20", "--global_batch", "64",
                "--optimizer", "sgd", "--lr", "0.05", "--tensorboard", tensorboard.toString());
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());

        List<Path> files;
        try (var listing = Files.list(tensorboard)) {
            files = listing.toList();
        }
        assertEquals(1, files.size(), "rank 0 alone writes, one file: " + files);
        assertTrue(files.getFirst().getFileName().toString().startsWith("events.out.tfevents."), files.toString());
        List<JsonNode> events = TfEventsPy.read(files.getFirst());
        assertEquals("brain.Event:2", events.getFirst().get("file_version").asText());
        Map<String, Map<Long, Float>> byTag = new TreeMap<>();
        for (JsonNode e : events.subList(1, events.size())) {
            byTag.computeIfAbsent(e.get("tag").asText(), t -> new TreeMap<>())
                    .put(e.get("step").asLong(), (float) e.get("value").asDouble());
        }
        assertEquals(List.of("test/accuracy", "train/accuracy", "train/allreduce_ms", "train/learning_rate", "train/loss",
                "train/samples_per_sec", "train/step_time_ms"), List.copyOf(byTag.keySet()));
        double[] losses = LossCurve.readCsv(job.logDir().resolve("loss_curve.csv"));
        assertEquals(20, losses.length);
        for (int step = 1; step <= 20; step++) {
            assertEquals((float) losses[step - 1], byTag.get("train/loss").get((long) step), "the loss of step " + step);
            assertEquals(0.05f, byTag.get("train/learning_rate").get((long) step));
            assertTrue(byTag.get("train/samples_per_sec").get((long) step) > 0, "samples/s of step " + step);
            assertTrue(byTag.get("train/step_time_ms").get((long) step) > 0, "step time of step " + step);
            assertTrue(byTag.get("train/allreduce_ms").get((long) step) >= 0, "allreduce time of step " + step);
        }
        JsonNode summary = new ObjectMapper().readTree(job.logDir().resolve("summary.json").toFile());
        assertEquals(Map.of(20L, (float) summary.get("test_accuracy").asDouble()), byTag.get("test/accuracy"));
    }

    @Test
    void theLaunchersEndpointServesEachRanksFiguresWhileTheJobRuns() throws Exception {
        int port = FreePorts.one();
        FleetRunJob job = FleetRunJob.start(work.resolve("job"), 2, List.of("--metrics_port", "" + port), "mnist",
                "--epochs", "1000", "--global_batch", "64", "--optimizer", "sgd");
        try {
            URI uri = URI.create("http://127.0.0.1:" + port + "/metrics");
            Map<String, Double> first = scrapeUntil(uri, job, m -> m.containsKey("fleet_rank_steps_total 0")
                    && m.containsKey("fleet_rank_steps_total 1") && m.containsKey("fleet_rank_allreduce_seconds 1"));
            for (int rank = 0; rank < 2; rank++) {
                assertEquals(1.0, first.get("fleet_rank_up " + rank), first.toString());
                assertTrue(first.get("fleet_rank_step_seconds " + rank) > 0, first.toString());
                assertTrue(first.get("fleet_rank_samples_per_second " + rank) > 0, first.toString());
                assertTrue(first.get("fleet_rank_samples_total " + rank) >= 32, first.toString());
                assertTrue(first.get("fleet_rank_allreduce_seconds_total " + rank) > 0, first.toString());
                assertTrue(first.get("fleet_rank_loss " + rank) > 0, first.toString());
            }
            assertFalse(first.containsKey("fleet_rank_exit_code 0"), first.toString());
            double steps = first.get("fleet_rank_steps_total 0");
            scrapeUntil(uri, job, m -> m.getOrDefault("fleet_rank_steps_total 0", 0.0) > steps);
        } finally {
            job.launcher().destroy();
        }
        assertEquals(143, job.await(JOB_TIMEOUT), "SIGTERM ends the job as for any job\n" + job.describe());
        assertTrue(job.stderr().contains("fleetrun: metrics of this node's ranks at http://127.0.0.1:" + port + "/metrics"),
                job.stderr());
    }

    @Test
    void anAsyncParameterServerJobShowsItsServerAndEachWorkersPullPushTimesAndSendQueue() throws Exception {
        Path data = work.resolve("data");
        FleetRunJob gen = FleetRunJob.start(work.resolve("gen"), 1, "ctr_data", "--rows", "4000", "--out", data.toString());
        assertEquals(0, gen.await(JOB_TIMEOUT), gen.describe());
        Path strategy = Files.writeString(work.resolve("async.yaml"), "mode: ps\na_sync: true\n");
        int port = FreePorts.one();
        FleetRunJob job = FleetRunJob.start(work.resolve("job"), 2, List.of("--server_num", "1", "--worker_num", "2",
                "--strategy", strategy.toString(), "--metrics_port", "" + port), "ctr", "--data_dir", data.toString(),
                "--epochs", "1000", "--batch_size", "128", "--optimizer", "adagrad", "--lr", "0.05");
        try {
            Map<String, Double> m = scrapeUntil(URI.create("http://127.0.0.1:" + port + "/metrics"), job,
                    s -> s.containsKey("fleet_rank_ps_push_seconds_total 0") && s.containsKey("fleet_rank_ps_push_seconds_total 1")
                            && s.containsKey("fleet_rank_ps_send_queue_depth 0") && s.containsKey("fleet_rank_ps_send_queue_depth 1"));
            assertEquals(1.0, m.get("fleet_server_up 0"), m.toString());
            for (int rank = 0; rank < 2; rank++) {
                assertTrue(m.get("fleet_rank_ps_pull_seconds_total " + rank) > 0, m.toString());
                assertTrue(m.get("fleet_rank_ps_send_queue_depth " + rank) >= 0, m.toString());
                assertTrue(m.get("fleet_rank_steps_total " + rank) > 0, m.toString());
                assertFalse(m.containsKey("fleet_rank_allreduce_seconds " + rank), "no allreduce in ps mode: " + m);
            }
        } finally {
            job.launcher().destroy();
        }
        assertEquals(143, job.await(JOB_TIMEOUT), job.describe());
    }

    /**
     * Scrapes {@code uri} until the samples, keyed "NAME INDEX", satisfy {@code done}; fails at the job's timeout, or
     * when the launcher ends first. A refused connection is a launcher still starting.
     */
    private static Map<String, Double> scrapeUntil(URI uri, FleetRunJob job, Predicate<Map<String, Double>> done)
            throws Exception {
        long deadline = System.nanoTime() + JOB_TIMEOUT.toNanos();
        String last = "(no answer yet)";
        try (HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build()) {
            while (true) {
                // paces the scrapes (the ranks rewrite their figures once a second) and notices a launcher that ended
                if (job.launcher().waitFor(SCRAPE_PACE.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new AssertionError("the launcher ended while scraped; last answer:\n" + last + "\n" + job.describe());
                }
                assertTrue(System.nanoTime() < deadline, "no such figures within " + JOB_TIMEOUT + "; last answer:\n" + last);
                try {
                    HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertEquals(200, r.statusCode(), r.body());
                    last = r.body();
                } catch (ConnectException notYet) {
                    continue;
                } catch (IOException e) {
                    throw new AssertionError("scraping " + uri + " failed: " + e, e);
                }
                Map<String, Double> samples = new TreeMap<>();
                Matcher m = SAMPLE.matcher(last);
                while (m.find()) {
                    samples.put(m.group(1) + " " + m.group(3), Double.parseDouble(m.group(4)));
                }
                if (done.test(samples)) {
                    return samples;
                }
            }
        }
    }
}
