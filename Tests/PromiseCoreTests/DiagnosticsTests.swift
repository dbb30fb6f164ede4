import PromiseCore
import TestSupport
import Testing

/// Issue 8, item 5: in debug builds, promises that start work remember where they were created. Serialized:
/// each test counts the pending promises made in this file.
@Suite(.serialized) struct DiagnosticsTests {
    /// The pending promises created after `start` in this file (tests in other files run in parallel).
    static func pendingHere(after start: PromiseDiagnostics.Checkpoint) -> [PendingPromise] {
        PromiseDiagnostics.pendingPromises(createdAfter: start).filter {
            $0.site.fileID == "PromiseCoreTests/DiagnosticsTests.swift"
        }
    }

    @Test func aPendingPromiseIsListedWithItsSiteUntilItResolves() {
        guard PromiseDiagnostics.recordsCreationSites else {
            #expect(PromiseDiagnostics.pendingPromises().isEmpty, "release builds record nothing")
            return
        }
        let start = PromiseDiagnostics.checkpoint()
        let (promise, resolver) = Promise<Int>.pending(); let line = #line
        let listed = Self.pendingHere(after: start)
        #expect(listed.map(\.site) == [PromiseCreationSite(fileID: #fileID, line: UInt(line))])
        #expect(listed.first?.type == "Promise<Int>")
        #expect(listed.first?.description == "Promise<Int> created at \(#fileID):\(line)")
        resolver.fulfill(1)
        #expect(Self.pendingHere(after: start).isEmpty)
        _ = promise
    }

    @Test(.enabled(if: PromiseDiagnostics.recordsCreationSites, "only debug builds record creation sites"))
    func everyStartingInitialiserRecordsItsCallSite() {
        let start = PromiseDiagnostics.checkpoint()
        var resolvers: [Resolver<Int>] = []
        var resolves: [@Sendable (Int) -> Void] = []
        let a = Promise<Int> { resolvers.append($0) }; let lineA = #line
        let b = Guarantee<Int> { resolves.append($0) }; let lineB = #line
        let (c, resolveC) = Guarantee<Int>.pending(); let lineC = #line
        let listed = Self.pendingHere(after: start)
        #expect(listed.map(\.site.line) == [lineA, lineB, lineC].map(UInt.init))
        #expect(listed.map(\.type) == ["Promise<Int>", "Guarantee<Int>", "Guarantee<Int>"])
        resolvers.forEach { $0.fulfill(0) }
        resolves.forEach { $0(0) }
        resolveC(0)
        #expect(Self.pendingHere(after: start).isEmpty)
        _ = (a, b, c)
    }

    @Test(.enabled(if: PromiseDiagnostics.recordsCreationSites, "only debug builds record creation sites"))
    func chainLinksAndResolvedPromisesAreNotListed() {
        let start = PromiseDiagnostics.checkpoint()
        let (root, resolver) = Promise<Int>.pending()
        let chain = root.map(on: nil) { $0 + 1 }.then(on: nil) { Promise.value($0) }
        _ = Promise.value(1)
        #expect(Self.pendingHere(after: start).count == 1, "only the root, which the chain waits for")
        resolver.fulfill(1)
        #expect(chain.value == 2)
    }

    @Test(.enabled(if: PromiseDiagnostics.recordsCreationSites, "only debug builds record creation sites"))
    func aCheckpointHidesWhatCameBefore() {
        let before = PromiseDiagnostics.checkpoint()
        let (first, firstResolver) = Promise<Int>.pending()
        let middle = PromiseDiagnostics.checkpoint()
        let (second, secondResolver) = Promise<Int>.pending()
        #expect(Self.pendingHere(after: before).count == 2)
        #expect(Self.pendingHere(after: middle).count == 1)
        firstResolver.fulfill(1)
        secondResolver.fulfill(2)
        _ = (first, second)
    }

    /// A promise whose resolver went away while it was pending can never resolve: it stays listed, marked so, even
    /// once it is deallocated (a leak check must not miss it because the leaked objects were freed).
    @Test(.enabled(if: PromiseDiagnostics.recordsCreationSites, "only debug builds record creation sites"))
    func aPromiseThatWentAwayUnresolvedStaysListedAsNeverResolving() {
        let start = PromiseDiagnostics.checkpoint()
        var kept: Resolver<Int>?
        do {
            let (_, resolver) = Promise<Int>.pending()
            kept = resolver
        }
        // The resolver still holds its promise: it is alive, pending, and listed.
        #expect(kept != nil)
        #expect(Self.pendingHere(after: start).count == 1)
        #expect(Self.pendingHere(after: start).first?.canNeverResolve == false)
        let events = LogCapture.events { kept = nil }
        let listed = Self.pendingHere(after: start)
        #expect(listed.count == 1 && listed[0].canNeverResolve)
        #expect(listed.first?.description.hasSuffix(", which can never resolve") == true)
        #expect(events.count == 1)
    }

    /// A resolver is a value over its promise, so the warning comes when the promise goes away, once — not while
    /// something (a task awaiting it, a property) still holds it.
    @Test func aHeldPromiseIsReportedWhenItGoesAwayNotWhenItsResolverDoes() {
        var held: Promise<Int>?
        let whileHeld = LogCapture.events {
            let (promise, resolver) = Promise<Int>.pending()
            held = promise
            _ = resolver
        }
        #expect(whileHeld.isEmpty)
        #expect(held?.isPending == true)
        let whenGone = LogCapture.events { held = nil }
        #expect(whenGone.filter(\.isPendingPromiseDeallocated).count == 1)
        #expect(whenGone.count == 1)

        var heldGuarantee: Guarantee<Int>?
        let whileGuaranteeHeld = LogCapture.events { heldGuarantee = Guarantee<Int> { _ in } }
        #expect(whileGuaranteeHeld.isEmpty)
        #expect(heldGuarantee?.isPending == true)
        let whenGuaranteeGone = LogCapture.events { heldGuarantee = nil }
        #expect(whenGuaranteeGone.filter(\.isPendingGuaranteeDeallocated).count == 1)
    }

    /// Steps, combinators and resolved promises log nothing when they go away, pending or not: only a promise that a
    /// resolver (or a guarantee's resolve closure) was made for can be left unresolvable by its code.
    @Test func onlyPromisesMadeWithAResolverLogWhenDeallocatedPending() {
        let events = LogCapture.events {
            let (input, resolver) = Promise<Int>.pending()
            _ = input.map(on: nil) { $0 }.then(on: nil) { Promise.value($0) }
            _ = when(fulfilled: [input])
            _ = race([input])
            _ = Promise<Int> { $0.fulfill(1) }
            withExtendedLifetime(resolver) {}
            resolver.fulfill(1)
        }
        #expect(events.isEmpty)
    }

    @Test func theDeallocationWarningNamesTheSite() {
        let events = LogCapture.eventsWithSites {
            _ = Promise<Int>.pending()
        }
        let line = #line - 2
        guard let logged = events.first, case .pendingPromiseDeallocated = logged.event else {
            Issue.record("expected pendingPromiseDeallocated, got \(events)")
            return
        }
        if PromiseDiagnostics.recordsCreationSites {
            #expect(logged.site == PromiseCreationSite(fileID: #fileID, line: UInt(line)))
        } else {
            #expect(logged.site == nil)
        }

        let guaranteeEvents = LogCapture.eventsWithSites {
            _ = Guarantee<Int> { _ in }
        }
        let guaranteeLine = #line - 2
        guard let guaranteeLogged = guaranteeEvents.first,
            case .pendingGuaranteeDeallocated = guaranteeLogged.event
        else {
            Issue.record("expected pendingGuaranteeDeallocated, got \(guaranteeEvents)")
            return
        }
        if PromiseDiagnostics.recordsCreationSites {
            #expect(guaranteeLogged.site?.line == UInt(guaranteeLine))
        }
        // Outside a log handler there is no logged site.
        #expect(PromiseDiagnostics.loggedCreationSite == nil)
    }

    /// Issue 14, item 2: PromiseKit code constructs the events and prints them; both are as in PromiseKit.
    @Test func logEventsAreConstructedAndPrintedAsInPromiseKit() {
        let events: [LogEvent] = [
            .waitOnMainThread, .pendingPromiseDeallocated, .pendingGuaranteeDeallocated, .cauterized(PMKError.badInput),
        ]
        #expect(
            events.map { "\($0)" }.prefix(3) == [
                "waitOnMainThread", "pendingPromiseDeallocated", "pendingGuaranteeDeallocated",
            ]
        )
        #expect("\(events[3])" == "cauterized(\(PMKError.badInput))")
        #expect("\(LogEvent.pendingPromiseDeallocated)" == "pendingPromiseDeallocated")
    }

    /// Many promises made and resolved on several threads while others list: no race, and the table sweeps what
    /// resolved (the pending ones are all still listed).
    @Test(.enabled(if: PromiseDiagnostics.recordsCreationSites, "only debug builds record creation sites"))
    func recordingAndListingFromManyThreads() {
        let start = PromiseDiagnostics.checkpoint()
        let kept = Shared<[Resolver<Int>]>([])
        runConcurrently(threads: 4) { thread in
            for index in 0..<2_000 {
                let (_, resolver) = Promise<Int>.pending()
                if index % 500 == 0 {
                    kept.append(resolver)
                } else {
                    resolver.fulfill(index)
                }
                if thread == 0, index % 100 == 0 {
                    _ = PromiseDiagnostics.pendingPromises(createdAfter: start)
                }
            }
        }
        #expect(Self.pendingHere(after: start).count == 16)
        for resolver in kept.current { resolver.fulfill(0) }
        #expect(Self.pendingHere(after: start).isEmpty)
    }
}
