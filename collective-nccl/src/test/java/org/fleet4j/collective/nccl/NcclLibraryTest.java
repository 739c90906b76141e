package org.fleet4j.collective.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** What the nccl backend says when its binding or a shared object it needs is missing. */
class NcclLibraryTest {
    private static UnsatisfiedLinkError linkError(String missing) {
        UnsatisfiedLinkError outer = new UnsatisfiedLinkError("no jninccl in java.library.path: /usr/lib");
        outer.initCause(new UnsatisfiedLinkError("/tmp/cache/libjninccl.so: " + missing
                + ": cannot open shared object file: No such file or directory"));
        return outer;
    }

    @Test
    void aMissingLibraryIsNamedWithWhatToInstall() {
        assertEquals("the nccl backend cannot load libnccl.so.2, needed for collectives on GPU memory: pip install"
                + " nvidia-nccl-cu13 or apt install libnccl2 (built for CUDA 13), and put its lib directory on"
                + " LD_LIBRARY_PATH (LD_LIBRARY_PATH=/opt/nccl/lib)",
                NcclLibrary.explain(linkError("libnccl.so.2"), "/opt/nccl/lib"));
        assertTrue(NcclLibrary.explain(linkError("libcuda.so.1"), null).contains(
                "cannot load libcuda.so.1, needed for collectives on GPU memory: install the NVIDIA driver"));
        assertTrue(NcclLibrary.explain(linkError("libcudart.so.13"), null).contains("install the CUDA 13 runtime"));
    }

    @Test
    void aLinkErrorWithoutTheLibrarysNameNamesWhatNcclNeeds() {
        String m = NcclLibrary.explain(new NoClassDefFoundError("Could not initialize class"
                + " org.bytedeco.cuda.global.cudart"), "/x");
        assertEquals("the nccl backend cannot link JavaCPP's CUDA and NCCL bindings (NoClassDefFoundError: Could not"
                + " initialize class org.bytedeco.cuda.global.cudart): install the NVIDIA driver, the CUDA 13 runtime"
                + " (libcudart.so.13) and NCCL (libnccl.so.2), and put their lib directories on LD_LIBRARY_PATH"
                + " (LD_LIBRARY_PATH=/x)", m);
    }

    @Test
    void aMissingBindingSaysWhichJarsToAdd() {
        assertTrue(NcclLibrary.explain(new ClassNotFoundException("org.bytedeco.cuda.global.nccl"), null)
                .startsWith("the nccl backend needs JavaCPP's CUDA binding, which is not on the class path"));
    }
}
