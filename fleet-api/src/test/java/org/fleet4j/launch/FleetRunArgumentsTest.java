package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The launcher's answers to bad input and to --dry_run, called in-process: these start no rank. */
class FleetRunArgumentsTest {
    @TempDir
    Path work;

    private record Result(int code, String out, String err) {
    }

    private static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = FleetRun.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    static Stream<Arguments> badInput() {
        return Stream.of(
                Arguments.of(List.of("--nproc_per_node", "x", "mnist"), "Invalid value for option '--nproc_per_node': 'x' is not an int"),
                Arguments.of(List.of("--bogus", "mnist"), "Unknown option: '--bogus'"),
                Arguments.of(List.of("--nproc_per_node"), "Missing required parameter for option '--nproc_per_node'"),
                Arguments.of(List.of("--nproc_per_node", "0", "mnist"), "--nproc_per_node 0: expected at least 1"),
                Arguments.of(List.of("--strategy", "missing.yaml", "mnist"), "--strategy missing.yaml: file not found"),
                Arguments.of(List.of("--server_num", "0", "mnist"), "--server_num 0: expected at least 1"),
                Arguments.of(List.of("--server_num", "1", "--worker_num", "0", "mnist"), "--worker_num 0: expected at least 1"),
                Arguments.of(List.of("--worker_num", "2", "mnist"), "--worker_num 2 needs --server_num S"),
                Arguments.of(List.of("--server_num", "1", "--worker_num", "2", "--nproc_per_node", "3", "mnist"),
                        "--worker_num 2 disagrees with --nproc_per_node 3"),
                Arguments.of(List.of("--server_num", "1", "--nnodes", "2", "mnist"), "--server_num runs a parameter-server job on this host only"),
                Arguments.of(List.of("--workers", "h:1,h:2", "mnist"), "--workers needs --servers too"),
                Arguments.of(List.of("--servers", "x", "--workers", "127.0.0.1:7001", "mnist"), "--servers entry 'x': expected HOST:PORT"),
                Arguments.of(List.of("--servers", "127.0.0.1:7000", "--workers", "127.0.0.1:99999", "mnist"),
                        "--workers entry '127.0.0.1:99999': port '99999' is not a number in 1..65535"),
                Arguments.of(List.of("--servers", "127.0.0.1:7000,127.0.0.1:7000", "--workers", "127.0.0.1:7001", "mnist"),
                        "--servers lists 127.0.0.1:7000 twice"),
                Arguments.of(List.of("--servers", "127.0.0.1:7000", "--workers", "127.0.0.1:7000", "mnist"),
                        "--workers entry 127.0.0.1:7000 is also in --servers"),
                Arguments.of(List.of("--servers", "198.51.100.1:7000", "--workers", "198.51.100.2:7000", "mnist"),
                        "--servers/--workers: no host of theirs (198.51.100.1, 198.51.100.2) is an address of this machine"),
                Arguments.of(List.of("--servers", "127.0.0.1:7000", "--workers", "127.0.0.1:7001", "--server_num", "1", "mnist"),
                        "--servers/--workers place every process themselves; leave out --server_num"),
                Arguments.of(List.of("--servers", "127.0.0.1:7000", "--workers", "127.0.0.1:7001,127.0.0.1:7005", "mnist"),
                        "fleetrun needs the same number of trainers on every host, listed host by host, on consecutive ports"
                                + " from the same first port, e.g. 127.0.0.1:7001,127.0.0.1:7002"),
                Arguments.of(List.of("--master", "nohostport", "mnist"), "--master 'nohostport': expected HOST:PORT"),
                Arguments.of(List.of("--master", "h:99999", "mnist"), "--master 'h:99999': port '99999' is not a number in 1..65535"),
                Arguments.of(List.of("--nnodes", "2", "mnist"), "--nnodes 2 needs --master HOST:PORT"),
                Arguments.of(List.of("--nnodes", "2", "--master", "127.0.0.1:6170", "mnist"), "--nnodes 2 needs --rank"),
                Arguments.of(List.of("--ips", "127.0.0.1,127.0.0.2", "mnist"), "several of them are this machine; pass --rank"),
                Arguments.of(List.of("--ips", "10.0.0.1,10.0.0.2", "--nnodes", "3", "mnist"), "--nnodes 3 disagrees with --ips, which lists 2 host(s)"),
                Arguments.of(List.of("--ips", "10.0.0.1,10.0.0.2", "--rank", "2", "mnist"), "--rank 2: expected a node rank in 0..1"),
                Arguments.of(List.of("--devices", "0,x", "mnist"), "--devices '0,x': expected cpu, gpu, or GPU ids like 0,1"),
                Arguments.of(List.of("--gpus", "0,1", "--nproc_per_node", "3", "mnist"), "--nproc_per_node 3 disagrees with --devices 0,1"),
                Arguments.of(List.of("--log_level", "loud", "mnist"), "Invalid value for option '--log_level'"),
                Arguments.of(List.of("--cpu_bind", "numa", "mnist"), "Invalid value for option '--cpu_bind': expected one of [AUTO, NONE, CORES]"),
                Arguments.of(List.of("--format", "xml", "--dry_run"), "Invalid value for option '--format'"),
                Arguments.of(List.of("--jvm_args", "\"-Xmx1g", RoleProbe.class.getName()), "--jvm_args '\"-Xmx1g': the quote \" is never closed"),
                Arguments.of(List.of("--start_port", "65535", "--nproc_per_node", "2", "mnist"), "--start_port 65535: ports 65535..65536"),
                Arguments.of(List.of(), "missing PROGRAM: name a built-in (not_built, role_probe)"),
                Arguments.of(List.of("--nproc_per_node", "2"), "missing PROGRAM"),
                Arguments.of(List.of("no/such/app.jar"), "PROGRAM 'no/such/app.jar': jar file not found"),
                Arguments.of(List.of("com.acme.Missing"), "PROGRAM 'com.acme.Missing': main class com.acme.Missing not found on the classpath"),
                Arguments.of(List.of("not_built"), "main class com.acme.NotBuilt not found on the classpath; the built-in program 'not_built' is not part of this build"),
                Arguments.of(List.of("not a class!"), "PROGRAM 'not a class!' is neither a built-in"));
    }

    @ParameterizedTest
    @MethodSource("badInput")
    void badInputExitsWithCode2AndOneLineNamingTheProblem(List<String> args, String expected) {
        Result result = run(args.toArray(String[]::new));

        assertEquals(2, result.code(), result.err());
        assertTrue(result.err().startsWith("fleetrun: "), result.err());
        assertTrue(result.err().contains(expected), result.err());
        assertEquals(1, result.err().lines().count(), "one line, no stack trace: " + result.err());
        assertEquals("", result.out());
    }

    @Test
    void debugLogLevelAddsTheStackTrace() {
        Result result = run("--log_level", "debug", "--nproc_per_node", "0", "mnist");

        assertEquals(2, result.code());
        assertTrue(result.err().contains("fleetrun: --nproc_per_node 0: expected at least 1"), result.err());
        assertTrue(result.err().contains("\tat org.fleet4j.launch.FleetRun"), result.err());
    }

    @Test
    void jarWithoutMainClassIsRejected() throws IOException {
        Path jar = work.resolve("lib.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), new Manifest())) {
            out.flush();
        }

        Result result = run(jar.toString());

        assertEquals(2, result.code());
        assertTrue(result.err().contains(jar + " has no Main-Class in META-INF/MANIFEST.MF"), result.err());
    }

    @Test
    void helpListsTheOptionsAndBuiltinPrograms() {
        Result result = run("--help");

        assertEquals(0, result.code());
        for (String expected : List.of("--nproc_per_node", "--devices", "--gpus", "--ips", "--master", "--nnodes", "--rank", "--log_dir",
                "--start_port", "--strategy", "--dry_run", "--format", "--job_id", "--job_token_file", "--log_level", "--jvm_args",
                "not_built   com.acme.NotBuilt", "role_probe  org.fleet4j.launch.RoleProbe")) {
            assertTrue(result.out().contains(expected), expected + " missing from:\n" + result.out());
        }
    }

    @Test
    void dryRunPrintsTheWorldFromTheFlagsAndStartsNothing() {
        Path logDir = work.resolve("log");

        Result table = run("--dry_run", "--ips", "10.0.0.1,10.0.0.2", "--nproc_per_node", "3", "--log_dir", logDir.toString());
        Result json = run("--dry_run", "--format", "json", "--nnodes", "2", "--nproc_per_node", "3");

        assertEquals(0, table.code(), table.err());
        assertTrue(table.out().contains("6 ranks"), table.out());
        assertTrue(table.out().contains("compiler pipeline: fuse_all_reduce_ops\n"), table.out());
        assertEquals(0, json.code(), json.err());
        assertTrue(json.out().strip().startsWith("{") && json.out().strip().endsWith("}"), json.out());
        assertFalse(Files.exists(logDir), "a dry run writes no logs");
    }

    @Test
    void dryRunOfAProgramShowsWhatTheCompilerDoesToItAndTrainsNothing() throws IOException {
        Path strategy = Files.writeString(work.resolve("s.yaml"), "nccl_comm_num: 2\nfuse_grad_size_in_TFLOPS: 2\n");

        Result result = run("--dry_run", "--nproc_per_node", "2", "--strategy", strategy.toString(), "--log_dir",
                work.resolve("log").toString(), DryRunProbe.class.getName());

        assertEquals(0, result.code(), result.out() + result.err());
        assertTrue(result.out().contains("2 ranks on cpu"), result.out());
        assertTrue(result.out().contains("[rank 0] compiler pipeline: fuse_all_reduce_ops"), result.out());
        assertTrue(result.out().contains("ring 1"), "buckets go round-robin to both rings:\n" + result.out());
        assertTrue(result.out().contains("nothing ran"), result.out());
        assertFalse(result.out().contains("past minimize"), result.out());
    }

    @Test
    void dryRunOfAProgramWantsTheTableFormat() {
        Result result = run("--dry_run", "--format", "json", DryRunProbe.class.getName());

        assertEquals(2, result.code());
        assertTrue(result.err().contains("--dry_run --format json describes the strategy only"), result.err());
    }

    @Test
    void dryRunReportsABadStrategyFileWithCode2() throws IOException {
        Path strategy = Files.writeString(work.resolve("bad.yaml"), "no_such_key: 1\n");

        Result result = run("--dry_run", "--strategy", strategy.toString());

        assertEquals(2, result.code());
        assertTrue(result.err().contains("no_such_key"), result.err());
    }

    @Test
    void devicesGpuEitherFindsGpusOrSaysWhereItLooked() {
        Result result = run("--dry_run", "--devices", "gpu");

        if (result.code() == 0) {
            assertTrue(result.out().contains("gpu"), result.out());
        } else {
            assertEquals(2, result.code());
            assertTrue(result.err().contains("--devices gpu: no GPU found (looked at CUDA_VISIBLE_DEVICES"), result.err());
        }
    }
}
