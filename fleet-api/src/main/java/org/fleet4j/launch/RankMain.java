package org.fleet4j.launch;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import org.fleet4j.fleet.DryRunFinished;

/**
 * The main class of every rank JVM the launcher starts: {@code RankMain LAUNCHER_PID MAIN_CLASS [ARGS...]}. It starts
 * a {@link LauncherWatch} on the launcher, then runs the program's own main method, so every program, a user's jar
 * included, stops when its launcher dies, also by SIGKILL, when no code of the launcher runs. An exception out of
 * main exits with its code of {@link ExitCodes}, so a user's program follows the table too.
 */
public final class RankMain {
    private RankMain() {
    }

    public static void main(String[] args) throws Throwable {
        if (args.length < 2 || !args[0].matches("\\d{1,19}")) {
            System.err.println("usage: RankMain LAUNCHER_PID MAIN_CLASS [ARGS...] (bin/fleetrun starts ranks this way)");
            System.exit(ExitCodes.BAD_INPUT);
        }
        LauncherWatch.start(Long.parseLong(args[0]));
        MethodHandle main = programMain(Class.forName(args[1], false, RankMain.class.getClassLoader()));
        try {
            main.invokeExact(Arrays.copyOfRange(args, 2, args.length));
        } catch (DryRunFinished done) {
            // fleetrun --dry_run PROGRAM: the program stopped in minimize once the compiler's report was written
            System.out.println(done.getMessage());
            System.out.flush();
            System.exit(0);
        } catch (Throwable t) {
            // as the JVM reports an exception out of main, but with the exit code of what failed (ExitCodes)
            System.err.print("Exception in thread \"" + Thread.currentThread().getName() + "\" ");
            t.printStackTrace();
            System.exit(ExitCodes.of(t));
        }
    }

    /**
     * The program's main method as the java launcher picks it (JDK 25): {@code main(String[])} before {@code main()},
     * static or an instance method of a new instance, inherited ones included; adapted to take the arguments.
     */
    static MethodHandle programMain(Class<?> program) throws ReflectiveOperationException {
        Method method = findMain(program, String[].class);
        if (method == null) {
            method = findMain(program);
        }
        if (method == null) {
            throw new NoSuchMethodException("no main method in " + program.getName()
                    + ": define static void main(String[] args), or void main()");
        }
        method.setAccessible(true);
        MethodHandle handle = MethodHandles.lookup().unreflect(method);
        if (!Modifier.isStatic(method.getModifiers())) {
            Constructor<?> constructor = program.getDeclaredConstructor();
            constructor.setAccessible(true);
            handle = handle.bindTo(constructor.newInstance());
        }
        if (method.getParameterCount() == 0) {
            handle = MethodHandles.dropArguments(handle, 0, String[].class);
        }
        return handle.asType(MethodType.methodType(void.class, String[].class));
    }

    private static Method findMain(Class<?> program, Class<?>... parameters) {
        for (Class<?> type = program; type != null; type = type.getSuperclass()) {
            try {
                Method method = type.getDeclaredMethod("main", parameters);
                return Modifier.isPrivate(method.getModifiers()) ? null : method;
            } catch (NoSuchMethodException e) {
                // look in the superclass
            }
        }
        return null;
    }
}
