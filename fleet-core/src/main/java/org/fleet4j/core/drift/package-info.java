/**
 * {@link RoundingNoise}: moves every nonzero float32 parameter a few ulps at random (seeded), so that a training
 * started from the moved values differs from the original by rounding alone; the distance between the two is the
 * float32 noise against which the drift tests judge a difference between two runs (the examples' mnist offers it as an
 * option). It imports {@code core.exec} (Scope), {@code core.ir} and {@code core.tensor}, and holds no state.
 */
package org.fleet4j.core.drift;
