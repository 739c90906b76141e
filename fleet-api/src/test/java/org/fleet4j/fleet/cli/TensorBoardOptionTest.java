package org.fleet4j.fleet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.fleet4j.fleet.tensorboard.SummaryWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

class TensorBoardOptionTest {
    @TempDir
    Path dir;

    @Command(name = "program")
    static final class Program implements Callable<Integer> {
        @Mixin
        TensorBoardOption tensorboard;

        @Override
        public Integer call() {
            try (SummaryWriter w = tensorboard.writer()) {
                return w == null ? 0 : 1;
            }
        }
    }

    @Test
    void theOptionNamesAFolderWhereRankZeroWritesAnEventFile() throws Exception {
        Program p = new Program();
        new CommandLine(p).parseArgs("--tensorboard", dir.resolve("tb").toString());
        try (SummaryWriter w = p.tensorboard.writer()) {
            assertEquals(dir.resolve("tb"), w.file().getParent());
        }
        Program none = new Program();
        new CommandLine(none).parseArgs();
        assertNull(none.tensorboard.writer());
    }

    @Test
    void aFolderThatCannotBeMadeIsTheUsersErrorWithExitCode2() throws Exception {
        Path file = Files.writeString(dir.resolve("plain"), "x");
        assertEquals("--tensorboard " + file + ": cannot write TensorBoard event files there (" + file
                        + " exists and is not a folder)",
                assertThrows(IllegalArgumentException.class, () -> folder(file).writer()).getMessage());
        assertEquals("--tensorboard " + file.resolve("sub") + ": cannot write TensorBoard event files there ("
                        + file.resolve("sub") + ": Not a directory)",
                assertThrows(IllegalArgumentException.class, () -> folder(file.resolve("sub")).writer()).getMessage());
        assertEquals(2, ProgramMain.run("program", new Program(), new String[]{"--tensorboard", file.toString()}));
    }

    private static TensorBoardOption folder(Path dir) {
        TensorBoardOption o = new TensorBoardOption();
        o.dir = dir;
        return o;
    }
}
