package org.fleet4j.core.ops;

import org.fleet4j.core.ir.AttrType;

/** An attribute an op accepts: its type and default (null = required). */
public record AttrDef(String name, AttrType type, Object defaultValue) {
}
