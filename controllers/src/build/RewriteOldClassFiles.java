import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassFileVersion;
import java.lang.classfile.ClassHierarchyResolver;
import java.lang.classfile.ClassModel;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeTransform;
import java.lang.constant.ClassDesc;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A build step of the controller's jar (controllers/pom.xml, package phase, run by the JDK's source
 * launcher): rewrites each class file in the jar older than Java 6 (major version 50) as a Java 8
 * class file, with the stack maps the newer verifier needs. The instructions stay the same.
 *
 * <p>Why: JDK 25's ahead-of-time cache leaves such classes out ("Old class has been linked" in
 * -Xlog:aot). picocli ships Java 5 class files, so every start of the controller and of the drain
 * CLI loaded, parsed and verified about 170 of them from the jar: about 0.1 CPU-s per start
 * (docs/benchmarks.md). Usage: {@code java RewriteOldClassFiles.java JAR}.
 */
public final class RewriteOldClassFiles {
  private static final int OLDEST_CACHED = 50;
  private static final int REWRITTEN_AS = 52;

  public static void main(String[] args) throws IOException {
    Path jar = Path.of(args[0]);
    try (FileSystem fs = FileSystems.newFileSystem(URI.create("jar:" + jar.toUri()), Map.of())) {
      ClassFile classFile =
          ClassFile.of(
              ClassFile.StackMapsOption.GENERATE_STACK_MAPS,
              ClassFile.ClassHierarchyResolverOption.of(
                  ClassHierarchyResolver.defaultResolver()
                      .orElse(ClassHierarchyResolver.ofResourceParsing(d -> inJar(fs, d)))));
      List<Path> classes;
      try (Stream<Path> all = Files.walk(fs.getPath("/"))) {
        classes = all.filter(p -> p.toString().endsWith(".class")).toList();
      }
      int rewritten = 0;
      for (Path p : classes) {
        ClassModel model = classFile.parse(Files.readAllBytes(p));
        if (model.majorVersion() < OLDEST_CACHED) {
          Files.write(p, classFile.transformClass(model, asJava8()));
          rewritten++;
        }
      }
      System.out.printf(
          "%s: %d class files older than major version %d rewritten as %d%n",
          jar.getFileName(), rewritten, OLDEST_CACHED, REWRITTEN_AS);
    }
  }

  /** The new version; every method body passed through, so its stack maps are generated. */
  private static ClassTransform asJava8() {
    ClassTransform version =
        (builder, element) -> {
          if (element instanceof ClassFileVersion) {
            builder.withVersion(REWRITTEN_AS, 0);
          } else {
            builder.with(element);
          }
        };
    return version.andThen(ClassTransform.transformingMethodBodies(CodeTransform.ACCEPT_ALL));
  }

  /** A class of the jar itself, for the stack maps' type merges; null: not in the jar. */
  private static InputStream inJar(FileSystem fs, ClassDesc desc) {
    String descriptor = desc.descriptorString();
    Path p = fs.getPath("/" + descriptor.substring(1, descriptor.length() - 1) + ".class");
    try {
      return Files.exists(p) ? Files.newInputStream(p) : null;
    } catch (IOException e) {
      return null;
    }
  }
}
