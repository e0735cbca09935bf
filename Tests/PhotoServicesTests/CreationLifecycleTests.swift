import PhotoServices
import Testing

/// What a client does with each answer to a group creation it sends (`CreationLifecycle`): created,
/// refused (nothing exists on the server), or kept for the next sync.
@Suite struct CreationLifecycleTests {
    @Test(arguments: [
        // No answer, or no decision yet: kept, and sent again with the same id.
        (nil, CreationLifecycle.Step.keepPending("why")),
        (500, .keepPending("why")), (502, .keepPending("why")), (503, .keepPending("why")), (504, .keepPending("why")),
        (401, .keepPending("why")),  // an expired token: a fresh one will do
        (408, .keepPending("why")), (425, .keepPending("why")), (429, .keepPending("why")),
        (301, .keepPending("why")), (307, .keepPending("why")),  // redirects are not followed with credentials
        // The server has it (also when it answers a repeated creation as the first).
        (200, .created), (201, .created),
        // Refused: the rules, an id created by someone else, a malformed request.
        (400, .refused("why")), (403, .refused("why")), (404, .refused("why")), (409, .refused("why")), (413, .refused("why")),
        (422, .refused("why")),
    ] as [(Int?, CreationLifecycle.Step)])
    func step(status: Int?, expected: CreationLifecycle.Step) {
        #expect(CreationLifecycle.step(status: status, detail: "why") == expected)
    }
}
