import NIOCore
import Synchronization

/// One request's bytes for a `SharedUploadStore`: kept in memory until `sync()`, or until `flushEvery`
/// bytes are waiting, then made a piece.
final class PieceAppender: UploadAppender {
    struct State {
        var pending: [UInt8] = []
        /// Bytes of this request already in pieces.
        var durable: Int64 = 0
    }

    let store: SharedUploadStore
    let id: String
    let start: Int64
    let flushEvery: Int?
    private let state = Mutex(State())

    init(store: SharedUploadStore, id: String, start: Int64, flushEvery: Int?) {
        self.store = store
        self.id = id
        self.start = start
        self.flushEvery = flushEvery
    }

    var count: Int64 { state.withLock { $0.durable + Int64($0.pending.count) } }

    func write(_ buffer: ByteBuffer) async throws(UploadStoreFailure) {
        let waiting = state.withLock { state in
            buffer.withUnsafeReadableBytes { state.pending += $0 }
            return state.pending.count
        }
        if let flushEvery, waiting >= flushEvery { try await sync() }
    }

    func sync() async throws(UploadStoreFailure) {
        let (bytes, at) = state.withLock { ($0.pending, start + $0.durable) }
        guard !bytes.isEmpty else { return }
        try await store.addPiece(id, at: at, bytes)
        state.withLock {
            $0.pending.removeFirst(bytes.count)
            $0.durable += Int64(bytes.count)
        }
    }

    func rollback() async {
        let durable = state.withLock { state in
            state.pending = []
            defer { state.durable = 0 }
            return state.durable
        }
        if durable > 0 { await store.removePieces(id, from: start, through: start + durable) }
    }
}
