/**
 * Text for people: how a message quotes what a user or a peer gave ({@link org.fleet4j.text.Quoted}). Seen by every
 * module, so each quotes input the same way; it imports nothing of ours.
 */
package org.fleet4j.text;
