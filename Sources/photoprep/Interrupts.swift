import Foundation
import Synchronization

/// Set by the first SIGINT/SIGTERM: commands stop taking new work.
let stopRequested = Atomic<Bool>(false)

/// The first SIGINT/SIGTERM sets `stopRequested`, says `message` and calls `onStop`; the second
/// exits at once (status 130).
struct Interrupts {
    let sources: [any DispatchSourceSignal]

    static func install(_ message: String, onStop: @escaping @Sendable () -> Void = {}) -> Interrupts {
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if stopRequested.exchange(true, ordering: .relaxed) { exit(130) }
                FileHandle.standardError.write(Data("\n\(message) (Ctrl-C again to stop now)…\n".utf8))
                onStop()
            }
            source.resume()
            return source
        }
        return Interrupts(sources: sources)
    }

    func cancel() { sources.forEach { $0.cancel() } }
}
