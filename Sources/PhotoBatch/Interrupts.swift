#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
package import Synchronization

/// Set by the first SIGINT/SIGTERM: commands stop taking new work.
package let stopRequested = Atomic<Bool>(false)

/// The first SIGINT/SIGTERM sets `stopRequested`, says `message` and calls `onStop`; the second
/// exits at once (status 130).
package struct Interrupts {
    let sources: [any DispatchSourceSignal]

    package static func install(_ message: String, onStop: @escaping @Sendable () -> Void = {}) -> Interrupts {
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if stopRequested.exchange(true, ordering: .relaxed) { exit(130) }
                StandardStream.error.write("\n\(message) (Ctrl-C again to stop now)…\n")
                onStop()
            }
            source.resume()
            return source
        }
        return Interrupts(sources: sources)
    }

    package func cancel() { sources.forEach { $0.cancel() } }
}
