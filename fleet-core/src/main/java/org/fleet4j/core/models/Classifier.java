package org.fleet4j.core.models;

import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;

/**
 * A classifier's programs and the vars a training loop feeds and fetches: the training program (forward, loss and,
 * once an optimizer has minimised the loss, backward and the updates), its startup program, and the forward-only
 * program that tests it (batch norm on its running statistics); {@code image} and {@code label} are fed,
 * {@code loss} and {@code accuracy} fetched. The test program uses the training program's parameter and var names.
 */
public interface Classifier {
    Program main();

    Program startup();

    Program test();

    Var image();

    Var label();

    Var logits();

    Var loss();

    Var accuracy();
}
