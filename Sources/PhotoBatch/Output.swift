#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing to the standard streams without Foundation's `FileHandle`: straight to the file
/// descriptor, unbuffered, so that a line is out before the next event (a reader of `--json` sees
/// each as it happens) and nothing is lost when the process is killed.
package enum StandardStream {
    case output, error

    package func write(_ text: String) {
        write(Array(text.utf8))
    }

    package func write(_ bytes: [UInt8]) {
        let fd = self == .output ? STDOUT_FILENO : STDERR_FILENO
        bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                #if canImport(Glibc)
                let n = Glibc.write(fd, buffer.baseAddress! + done, buffer.count - done)
                #else
                let n = Darwin.write(fd, buffer.baseAddress! + done, buffer.count - done)
                #endif
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                done += n
            }
        }
    }
}

/// `printf`-style formatting (`"%.1f"`, `"%02x"`), what Foundation's `String(format:)` did here.
package func cFormat(_ format: String, _ arguments: any CVarArg...) -> String {
    withVaList(arguments) { list in
        var buffer = [CChar](repeating: 0, count: 128)
        let needed = Int(vsnprintf(&buffer, buffer.count, format, list))
        guard needed >= buffer.count else { return String(nulTerminated: buffer) }
        return withVaList(arguments) { again in
            var larger = [CChar](repeating: 0, count: needed + 1)
            _ = vsnprintf(&larger, larger.count, format, again)
            return String(nulTerminated: larger)
        }
    }
}

extension String {
    /// The text of a C buffer up to its first NUL, as UTF-8.
    package init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
