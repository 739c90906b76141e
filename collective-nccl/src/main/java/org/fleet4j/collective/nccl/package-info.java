/**
 * NCCL, the device backend for CUDA buffers. {@link NcclBackend} registers as a {@code DeviceBackendProvider};
 * {@code NcclCommunicator} runs one communicator on its own stream, ordered after the buffer's stream, and aborts it
 * past the group's timeout; {@code NcclIdExchange} hands rank 0's unique id to the others through the rendezvous
 * {@code Store}. {@link NcclLibrary} links JavaCPP's binding on first use, and {@link SharedObjects} names the shared
 * object a link error could not open. The only package of the module that imports {@code org.bytedeco} (an optional
 * dependency): finding and constructing the provider loads no CUDA class; only {@code NcclBackend.open} does.
 */
package org.fleet4j.collective.nccl;
