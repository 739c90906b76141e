/**
 * The program IR: a {@link Program} holds one {@link Block} of {@link Var}s ({@link VarKind}: dense or sparse rows; a
 * {@link Regularizer} for weight decay) and {@link Op}s with typed attributes ({@link AttrType}); {@link ProgramJson}
 * serialises it, and a program that is not well formed is an {@link IrException}. It imports only {@code core.tensor}
 * and Jackson: it does not import the ops. An op is checked and its shapes inferred as it enters a block by the
 * {@link OpChecker} that {@code core.ops} provides through ServiceLoader, so the two packages form no cycle.
 */
package org.fleet4j.core.ir;
