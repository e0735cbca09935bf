import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1

/// One POST to the app's backend (a hook, the events' receiver), bounded by `timeout` whatever the backend does: no
/// answer, a slow body, a connection the HTTP client keeps retrying. The status and up to `limit` bytes of the body, or
/// why there was no answer.
public enum BoundedPost {
    public enum Outcome: Sendable, Equatable {
        case answered(status: Int, body: Data)
        case failed(String)
    }

    public static func send(
        to url: String, body: Data, headers: [(String, String)] = [], timeout: Duration, limit: Int = 64 << 10
    ) async -> Outcome {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "photoprep")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let prepared = request
        return await withTaskGroup(of: Outcome?.self) { group in
            group.addTask {
                do {
                    let response = try await HTTPClient.shared.execute(prepared, timeout: .milliseconds(Int64(timeout / .milliseconds(1))))
                    let answer = (try? await response.body.collect(upTo: limit)).map { Data($0.readableBytesView) } ?? Data()
                    return .answered(status: Int(response.status.code), body: answer)
                } catch is CancellationError {
                    return nil
                } catch {
                    return .failed("not answered: \(error)")
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failed("no answer within \(timeout)")
        }
    }
}
