package org.fleet4j.launch;

import com.google.auto.service.AutoService;

/** Programs the launcher's tests find by name, registered as a user's jar would register its own. */
final class TestPrograms {
    private TestPrograms() {
    }

    /** {@code role_probe}: prints the role the launcher gave the rank. */
    @AutoService(NamedProgram.class)
    public static final class RoleProbeProgram implements NamedProgram {
        @Override
        public String programName() {
            return "role_probe";
        }

        @Override
        public String mainClass() {
            return RoleProbe.class.getName();
        }
    }

    /** {@code not_built}: registered, but its main class is not on the class path. */
    @AutoService(NamedProgram.class)
    public static final class NotBuiltProgram implements NamedProgram {
        @Override
        public String programName() {
            return "not_built";
        }

        @Override
        public String mainClass() {
            return "com.acme.NotBuilt";
        }
    }
}
