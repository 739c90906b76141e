/**
 * What the processes of one job share besides their collectives: each process's {@link Role} (trainer or parameter
 * server; rank, world, node, endpoints), the {@link JobToken} that every store and data connection proves with an HMAC
 * without sending it, the rendezvous {@link Store} ({@link TcpStore}, a client that may also host the
 * {@link StoreServer}), {@link FreePorts} for listeners that bind a moment later, and {@link RateLimitedLog} for
 * warnings a stranger can provoke. It imports the JDK and {@code org.fleet4j.collective} (for CollectiveException)
 * only: it knows no backend, no tensor, and no launcher's or scheduler's environment variables (the role makers in
 * fleet-api read those).
 */
package org.fleet4j.cluster;
