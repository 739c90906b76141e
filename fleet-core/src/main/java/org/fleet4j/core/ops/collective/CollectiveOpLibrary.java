package org.fleet4j.core.ops.collective;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ops.OpLibrary;
import org.fleet4j.core.ops.OpSpec;

/** The collective op types, registered through {@link java.util.ServiceLoader} when the op registry is first used. */
@AutoService(OpLibrary.class)
public final class CollectiveOpLibrary implements OpLibrary {
    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>(CollectiveOps.specs());
        specs.addAll(HierarchicalOps.specs());
        return specs;
    }
}
