import Foundation
import PhotoServices
import PhotoUpload
import Testing

/// Every path of a photo job, event by event, as `PhotoJobMachine` decides it (the runner only does what
/// the actions say).
@Suite struct PhotoJobMachineTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    func progress(_ acknowledged: Int64, of total: Int64 = 1000) -> UploadProgress {
        UploadProgress(acknowledged: acknowledged, sent: acknowledged, total: total)
    }

    @Test func aNewJobIsPreparedThenUploadedThenRecorded() {
        var m = PhotoJobMachine()
        #expect(m.handle(.claimed(preparedPath: nil)) == [.emit(.preparing), .prepare])
        #expect(m.state == .preparing)
        #expect(m.handle(.prepared(path: "/s/j.jpg")) == [.savePrepared(path: "/s/j.jpg"), .deleteOriginal, .startUpload(path: "/s/j.jpg")])
        #expect(m.handle(.upload(.started(location: "http://t/files/1"), at: t0)) == [.saveLocation("http://t/files/1")])
        #expect(m.handle(.upload(.progress(progress(400)), at: t0)) == [.emit(.progress(progress(400))), .saveUploadedBytes(400)])
        #expect(m.handle(.upload(.finished(location: "http://t/files/1"), at: t0)) == [.record(location: "http://t/files/1")])
        #expect(m.state == .recording)
        #expect(m.handle(.recorded(url: "http://cdn/p.jpg", replaced: [])) == [.forgetUpload, .finish(.finished(url: "http://cdn/p.jpg"))])
        #expect(m.state == .ended)
        #expect(m.handle(.cancelRequested) == [], "nothing happens after the end")
    }

    @Test func aJobPreparedByAnEarlierAttemptGoesStraightToTheUpload() {
        var m = PhotoJobMachine()
        #expect(m.handle(.claimed(preparedPath: "/s/j.jpg")) == [.deleteOriginal, .startUpload(path: "/s/j.jpg")])
        #expect(m.state == .uploading)
    }

    @Test func progressIsSavedAtMostOncePerIntervalButAlwaysAtTheEnd() {
        var m = PhotoJobMachine(progressInterval: 1)
        _ = m.handle(.claimed(preparedPath: "/p"))
        #expect(m.handle(.upload(.progress(progress(0)), at: t0)) == [.emit(.progress(progress(0)))], "nothing acknowledged: nothing to save")
        #expect(m.handle(.upload(.progress(progress(100)), at: t0)).contains(.saveUploadedBytes(100)))
        #expect(m.handle(.upload(.progress(progress(200)), at: t0 + 0.5)) == [.emit(.progress(progress(200)))])
        #expect(m.handle(.upload(.progress(progress(300)), at: t0 + 1.0)).contains(.saveUploadedBytes(300)))
        #expect(m.handle(.upload(.progress(progress(1000)), at: t0 + 1.1)).contains(.saveUploadedBytes(1000)), "the last byte is always saved")
    }

    @Test(arguments: [
        (UploadError(.unreachable, "connection refused"), PhotoState.pending),
        (UploadError(.retriesExhausted, "HTTP 503"), .pending),
        (UploadError(.notAuthorized, "HTTP 403", status: 403), .failed),
        (UploadError(.tooLarge, "HTTP 413", status: 413), .failed),
        (UploadError(.rejected, "HTTP 400", status: 400), .failed),
    ])
    func aFailedUploadIsPendingWhenTransientElseFailed(error: UploadError, state: PhotoState) {
        var m = PhotoJobMachine()
        _ = m.handle(.claimed(preparedPath: "/p"))
        let event: PhotoJobEvent = state == .pending ? .pending(reason: error.description) : .failed(reason: error.description)
        #expect(m.handle(.upload(.failed(error), at: t0)) == [.end(state, error: error.description), .finish(event)])
    }

    @Test func aPhotoThatCannotBePreparedFailsAndItsOriginalGoes() {
        var m = PhotoJobMachine()
        _ = m.handle(.claimed(preparedPath: nil))
        #expect(m.handle(.prepareFailed(reason: "not a JPEG", unsupported: true))
            == [.deleteOriginal, .end(.failed, error: "not a JPEG"), .finish(.failed(reason: "not a JPEG"))])
        var n = PhotoJobMachine()
        _ = n.handle(.claimed(preparedPath: nil))
        #expect(n.handle(.prepareFailed(reason: "disk full", unsupported: false)) == [.end(.failed, error: "disk full"), .finish(.failed(reason: "disk full"))],
                "a failure that is not the photo's keeps the original for a retry")
    }

    @Test func cancellingWhilePreparingEndsCancelledOnceThePreparationReturns() {
        var m = PhotoJobMachine()
        _ = m.handle(.claimed(preparedPath: nil))
        #expect(m.handle(.cancelRequested) == [])
        #expect(m.handle(.prepared(path: "/p")) == [.end(.cancelled, error: nil), .finish(.cancelled)])
    }

    @Test func cancellingWhileUploadingCancelsTheUpload() {
        var m = PhotoJobMachine()
        _ = m.handle(.claimed(preparedPath: "/p"))
        #expect(m.handle(.cancelRequested) == [.cancelUpload])
        #expect(m.handle(.upload(.cancelled, at: t0)) == [.end(.cancelled, error: nil), .finish(.cancelled)])
    }

    @Test func stoppingPausesTheUploadAndLeavesTheJobPending() {
        var m = PhotoJobMachine()
        _ = m.handle(.claimed(preparedPath: "/p"))
        #expect(m.handle(.stopRequested) == [.pauseUpload])
        let ended = m.handle(.upload(.paused(progress(600)), at: t0))
        #expect(ended.first == .end(.pending, error: nil))
        guard case .finish(.pending) = ended.last else { Issue.record("\(ended)"); return }
    }

    @Test func stoppingWhilePreparingKeepsThePreparedBytesAndEndsPending() {
        var m = PhotoJobMachine()
        _ = m.handle(.claimed(preparedPath: nil))
        #expect(m.handle(.stopRequested) == [])
        let actions = m.handle(.prepared(path: "/p"))
        #expect(Array(actions.prefix(3)) == [.savePrepared(path: "/p"), .deleteOriginal, .end(.pending, error: nil)])
        #expect(!actions.contains(.startUpload(path: "/p")))
    }

    @Test func aLostLeaseStopsWithoutWritingOverTheNewHolder() {
        var m = PhotoJobMachine()
        _ = m.handle(.claimed(preparedPath: "/p"))
        let actions = m.handle(.leaseLost)
        #expect(actions == [.pauseUpload, .finish(.pending(reason: "another runner took the job over"))])
        #expect(!actions.contains { if case .end = $0 { true } else { false } }, "the other runner's state is not overwritten")
    }

    @Test func aReplacedProfilePictureIsDeletedAfterTheRecord() {
        var m = PhotoJobMachine()
        _ = m.handle(.claimed(preparedPath: "/p"))
        _ = m.handle(.upload(.finished(location: "l"), at: t0))
        #expect(m.handle(.recorded(url: "new", replaced: ["old"])) == [.forgetUpload, .deleteReplaced(url: "old"), .finish(.finished(url: "new"))])
    }

    @Test func aRecordThatFailsLeavesTheJobPending_andOneTakenOverIsLeftAlone() {
        var m = PhotoJobMachine()
        _ = m.handle(.claimed(preparedPath: "/p"))
        _ = m.handle(.upload(.finished(location: "l"), at: t0))
        #expect(m.handle(.recordFailed(reason: "database busy")) == [.end(.pending, error: "database busy"), .finish(.pending(reason: "database busy"))])
        var n = PhotoJobMachine()
        _ = n.handle(.claimed(preparedPath: "/p"))
        _ = n.handle(.upload(.finished(location: "l"), at: t0))
        #expect(n.handle(.notRecorded) == [.finish(.pending(reason: "another runner took the job over"))])
    }
}
