package org.fleet4j.core.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointFolderTest {
    @TempDir
    Path dir;

    private List<String> left() throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(f -> !f.equals(dir)).map(f -> dir.relativize(f).toString()).sorted().toList();
        }
    }

    @Test
    void anExistingOrANewFolderInAnExistingOnePassesAndNothingIsLeft() throws IOException {
        Files.createDirectories(dir.resolve("old"));
        CheckpointFolder.checkWritable(dir.resolve("old"));
        CheckpointFolder.checkWritable(dir.resolve("new"));
        assertEquals(List.of("old"), left(), "the check made nothing and left nothing");
    }

    @Test
    void aMissingParentAFileOrAPlaceWithoutNewFilesIsRefusedNamingIt() throws IOException {
        Path deep = dir.resolve("missing").resolve("ck");
        assertEquals("checkpoint " + deep + ": directory " + dir.resolve("missing") + " does not exist; create it first",
                assertThrows(CheckpointException.class, () -> CheckpointFolder.checkWritable(deep)).getMessage());
        Path file = Files.writeString(dir.resolve("file"), "x");
        assertEquals("checkpoint " + file + ": exists and is not a directory; name a folder",
                assertThrows(CheckpointException.class, () -> CheckpointFolder.checkWritable(file)).getMessage());
        assertFalse(Files.exists(dir.resolve("missing")));
        Path sys = Path.of("/sys/kernel");
        assumeTrue(Files.isDirectory(sys), "no sysfs here");
        String m = assertThrows(CheckpointException.class, () -> CheckpointFolder.checkWritable(sys.resolve("ck"))).getMessage();
        assertEquals("checkpoint /sys/kernel/ck: directory /sys/kernel does not let this user create files (permission denied);"
                + " choose a writable directory", m);
    }
}
