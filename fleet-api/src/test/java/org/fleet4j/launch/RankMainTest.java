package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** RankMain finds a program's main method as the java launcher of JDK 25 does, so any program runs under it unchanged. */
class RankMainTest {
    static final List<String> CALLS = new ArrayList<>();

    static class StaticMain {
        public static void main(String[] args) {
            CALLS.add("static " + List.of(args));
        }

        void main() {
            CALLS.add("not chosen: main(String[]) comes first");
        }
    }

    static class InstanceMainWithoutArgs {
        void main() {
            CALLS.add("instance main()");
        }
    }

    static class InheritsMain extends StaticMain {
    }

    static class PrivateMainOnly {
        private static void main(String[] args) {
            CALLS.add("private main is not a main method");
        }
    }

    static class ThrowingMain {
        static void main(String[] args) {
            throw new IllegalStateException("from the program");
        }
    }

    private static List<String> run(Class<?> program, String... args) throws Throwable {
        CALLS.clear();
        MethodHandle main = RankMain.programMain(program);
        main.invokeExact(args);
        return List.copyOf(CALLS);
    }

    @Test
    void mainMethodsAreChosenAsTheJavaLauncherChoosesThem() throws Throwable {
        assertEquals(List.of("static [a, b]"), run(StaticMain.class, "a", "b"));
        assertEquals(List.of("instance main()"), run(InstanceMainWithoutArgs.class, "ignored"));
        assertEquals(List.of("static [x]"), run(InheritsMain.class, "x"));
        assertEquals("no main method in " + PrivateMainOnly.class.getName() + ": define static void main(String[] args), or void main()",
                assertThrows(NoSuchMethodException.class, () -> RankMain.programMain(PrivateMainOnly.class)).getMessage());
    }

    @Test
    void theProgramsExceptionReachesTheJvmUnwrapped() {
        assertEquals("from the program", assertThrows(IllegalStateException.class, () -> run(ThrowingMain.class)).getMessage());
    }
}
