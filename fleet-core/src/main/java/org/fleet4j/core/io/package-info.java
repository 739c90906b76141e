/**
 * Checkpoints and weights files. {@link SafeTensors} reads and writes the safetensors format ({@link Checkpoint},
 * {@code SafeTensorsHeader}, {@code StoredDType}) and loads a file into named tensors ({@link LoadOptions},
 * {@link LoadReport}); {@link ModelState} is a model's state_dict, {@link Parameters} loads a weights-only file into it
 * all or nothing ({@link ParameterLoadOptions}, {@link NameMapFile}), {@link TorchStateDict} maps a PyTorch
 * {@code state_dict} onto the layers; {@link AtomicFile} and {@code TemporaryFile} write through a locked temporary and
 * a rename. Errors are {@link CheckpointException}s naming file and variable. It imports {@code core.autodiff},
 * {@code core.device} (ProgramRunner), {@code core.exec}, {@code core.ir}, {@code core.tensor} and Jackson.
 */
package org.fleet4j.core.io;
