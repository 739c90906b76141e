/**
 * Training data: a {@link Dataset} of named fields held in memory ({@link TensorDataset}, {@link MnistDataset} from IDX
 * files), the {@link DataLoader} that gives each rank its slice of every global batch in an order that depends only on
 * (seed, epoch) ({@code EpochPermutation}) into buffers allocated once ({@link Batch}), the IDX format
 * ({@link IdxReader}, {@link IdxWriter}, {@link IdxType}) and streamed Criteo files ({@link CriteoReader},
 * {@link CriteoRow}), each worker reading its share, and character-level text for language models ({@link TextCorpus}
 * with its {@link CharVocabulary}, the windows of {@link TextWindows}, batches given as a {@link WindowFile}). Bad files
 * are a {@link DataFormatException} naming file and line. It imports only {@code core.tensor} and collective-api's
 * {@code text.Quoted}: no rank talks to another to agree on the order.
 */
package org.fleet4j.core.data;
