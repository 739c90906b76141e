package org.fleet4j.pserver.grpcpp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** .endpoint_map and the map fleetrun publishes: parsing, which wins, and the errors that name the line. */
class EndpointMapTest {
    @TempDir
    Path dir;

    @Test
    void linesMapControlEndpointsToDataEndpoints() {
        EndpointMap map = EndpointMap.parse(List.of("# servers", "10.0.0.5:6170=10.0.0.5:7170", "",
                " host-b:6171 = host-b:7171 "), ".endpoint_map");
        assertEquals(Optional.of("10.0.0.5:7170"), map.dataEndpoint("10.0.0.5:6170"));
        assertEquals(Optional.of("host-b:7171"), map.dataEndpoint("host-b:6171"));
        assertEquals(Optional.empty(), map.dataEndpoint("10.0.0.5:6171"));
        assertEquals("10.0.0.5:6170=10.0.0.5:7170,host-b:6171=host-b:7171", map.asVariable());
    }

    @Test
    void aMalformedLineIsNamedWithItsNumberAndText() {
        String e = assertThrows(IllegalArgumentException.class, () -> EndpointMap.parse(List.of("a:1=a:2",
                "10.0.0.5:6170 10.0.0.5:7170"), "/w/.endpoint_map")).getMessage();
        assertEquals("/w/.endpoint_map line 2: '10.0.0.5:6170 10.0.0.5:7170' is not host:port=host:port (the server's"
                + " control endpoint = its grpc++ data endpoint); fix or remove the line", e);
        assertEquals("/w/.endpoint_map line 1: 'a:1=a:port' is not host:port=host:port (the server's control endpoint"
                + " = its grpc++ data endpoint); fix or remove the line", assertThrows(IllegalArgumentException.class,
                () -> EndpointMap.parse(List.of("a:1=a:port"), "/w/.endpoint_map")).getMessage());
        assertEquals("/w/.endpoint_map line 2: a:1 is mapped twice; keep one line for it",
                assertThrows(IllegalArgumentException.class, () -> EndpointMap.parse(List.of("a:1=a:2", "a:1=a:3"),
                        "/w/.endpoint_map")).getMessage());
    }

    @Test
    void theFileWinsOverThePublishedMap() throws Exception {
        Map<String, String> env = Map.of(EndpointMap.ENV, "h:1=h:100,h:2=h:200");
        assertEquals(Optional.of("h:200"), EndpointMap.discover(dir, env).dataEndpoint("h:2"), "without a file");
        assertEquals(EndpointMap.ENV, EndpointMap.discover(dir, env).source());
        Files.writeString(dir.resolve(".endpoint_map"), "h:2=h:999\n");
        EndpointMap map = EndpointMap.discover(dir, env);
        assertEquals(Optional.of("h:999"), map.dataEndpoint("h:2"));
        assertEquals(Optional.empty(), map.dataEndpoint("h:1"), "the file replaces the published map whole");
        assertEquals(dir.resolve(".endpoint_map").toString(), map.source());
        assertEquals(Optional.empty(), EndpointMap.discover(dir.resolve("none"), Map.of()).dataEndpoint("h:2"));
    }

    @Test
    void aDataPortOfZeroIsRefusedNamingTheLine() {
        assertEquals("/w/.endpoint_map line 2: 'h:2=h:0' maps the server to data port 0 (any free port), which its"
                + " workers cannot know; give it a fixed free port", assertThrows(IllegalArgumentException.class,
                () -> EndpointMap.parse(List.of("h:1=h:100", "h:2=h:0"), "/w/.endpoint_map")).getMessage());
    }

    @Test
    void twoServersOnOneDataPortAreRefusedNamingBothLines() {
        assertEquals("/w/.endpoint_map lines 1 and 3: servers h:1 and h:2 both map to data endpoint h:100; give each"
                + " server a data port of its own", assertThrows(IllegalArgumentException.class,
                () -> EndpointMap.parse(List.of("h:1=h:100", "# second", "h:2=h:100"), "/w/.endpoint_map")).getMessage());
    }

    @Test
    void aDataPortOnAServersControlEndpointIsRefusedNamingBothLines() {
        assertEquals("/w/.endpoint_map lines 1 and 2: data endpoint h:2 of server h:1 is the control endpoint of server"
                + " h:2; give each server a data port that no other port of the job uses", assertThrows(
                IllegalArgumentException.class, () -> EndpointMap.parse(List.of("h:1=h:2", "h:2=h:200"),
                        "/w/.endpoint_map")).getMessage());
        assertEquals("/w/.endpoint_map line 1: data endpoint h:1 of server h:1 is its own control endpoint; give it a"
                + " data port of its own", assertThrows(IllegalArgumentException.class,
                () -> EndpointMap.parse(List.of("h:1=h:1"), "/w/.endpoint_map")).getMessage());
    }

    @Test
    void aDataPortThatAnotherProcessOfTheJobUsesIsRefusedNamingTheLine() {
        EndpointMap map = EndpointMap.parse(List.of("h:1=h:100", "h:2=h:300"), "/w/.endpoint_map");
        map.checkFree(Map.of("h:301", "rank 0's endpoint"));
        assertEquals("/w/.endpoint_map line 2: data endpoint h:300 of server h:2 is rank 1's endpoint; give the server"
                + " a data port that no other port of the job uses", assertThrows(IllegalArgumentException.class,
                () -> map.checkFree(Map.of("h:300", "rank 1's endpoint"))).getMessage());
    }

    @Test
    void thePublishedMapIsCheckedLikeTheFile() {
        assertEquals(EndpointMap.ENV + " entries 1 and 2: servers h:1 and h:2 both map to data endpoint h:9; give each"
                + " server a data port of its own", assertThrows(IllegalArgumentException.class,
                () -> EndpointMap.discover(dir, Map.of(EndpointMap.ENV, "h:1=h:9,h:2=h:9"))).getMessage());
    }
}
