import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a transfer of an app's session runs, and who receives its callbacks as they come: one answer for every
/// transfer the library makes.
///
/// - A session made by `URLSession.withProgressReporting(configuration:delegateQueue:)`: that session, and its
///   router.
/// - A session without a delegate (`URLSession.shared`, `URLSession(configuration:)`): on Apple platforms from
///   macOS 12 and iOS 15, that session, with a router set as each task's own delegate. Elsewhere — Linux, whose
///   FoundationNetworking never calls a task's own delegate, and Apple platforms before those versions — a stand-in
///   session with the same configuration (its cookies, credentials, headers, protocols and timeouts; no URL cache on
///   Linux, see `withProgressReporting`), made once per session and let go of when that session is released
///   (``StandInSessions``). So every kind of transfer streams on these sessions too: live progress, downloads
///   written to their partial file as bytes arrive, and nothing written elsewhere — a download task on
///   swift-corelibs-foundation leaves what it received in the temporary directory when it is cancelled.
/// - A session with a delegate of the app's own: that session, without a router. Its transfers use completion
///   handlers, so that the app's delegate keeps answering its challenges (certificate pinning, say): a download's
///   body arrives at the end, in a file the platform chooses.
struct Transport: Sendable {
    /// Where the tasks are made.
    let session: URLSession
    /// Who hands each task's callbacks to its `TransferDelegate`; `nil`: the tasks use completion handlers.
    let router: TransferRouter?
    /// The app's session, when `session` is its stand-in: held as long as a download holds this transport, so that
    /// the stand-in is not let go of (``StandInSessions``) while the download still makes requests on it — a
    /// segmented download's next segment, a retry.
    let owner: URLSession?

    init(session: URLSession, router: TransferRouter?, owner: URLSession? = nil) {
        self.session = session
        self.router = router
        self.owner = owner
    }

    /// Whether bytes are delivered as they arrive.
    var isLive: Bool { router != nil }
}

extension URLSession {
    /// Where this session's cancellable transfers run (``Transport``).
    var transport: Transport {
        if let router = delegate as? TransferRouter { return Transport(session: self, router: router) }
        // A background session's transfers run outside the app, and it has a delegate anyway.
        guard delegate == nil, configuration.identifier == nil else { return Transport(session: self, router: nil) }
        #if !canImport(FoundationNetworking)
        if #available(macOS 12, iOS 15, tvOS 15, watchOS 8, *) {
            return Transport(session: self, router: TransferRouter(perTask: true))
        }
        #endif
        let standIn = StandInSessions.session(for: self)
        return Transport(session: standIn, router: standIn.delegate as? TransferRouter, owner: self)
    }
}
