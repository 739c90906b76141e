/**
 * What a training run shows and leaves behind: {@link ProgressBar} (one redrawn line on a terminal, a line per tenth of
 * an epoch in a log), {@link LossCurve} (a PNG line chart drawn with headless Java2D) and {@link Summary} (the run's
 * {@code summary.json}, written atomically). It writes to the streams and paths it is given and imports nothing of
 * Fleet4J: only the JDK and Jackson.
 */
package org.fleet4j.fleet.metrics;
