/** The compiler: program passes selected and ordered by the effective DistributedStrategy. */
package org.fleet4j.compiler;
