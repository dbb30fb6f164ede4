import Dispatch
import PromiseCore
import PromiseTesting
import TestSupport
import Testing

@Suite struct AfterTests {
    @Test func resolvesOnlyOnceTheDelayHasPassed() {
        let scheduler = TestClock()
        let timer = withPromiseClock(scheduler) { after(seconds: 2) }
        #expect(timer.isPending)
        scheduler.advance(by: .milliseconds(1_999))
        #expect(timer.isPending)
        scheduler.advance(by: .milliseconds(1))
        #expect(timer.isFulfilled)
    }

    @Test func dispatchTimeIntervalForm() {
        let scheduler = TestClock()
        let timer = withPromiseClock(scheduler) { after(.milliseconds(10)) }
        scheduler.advance(by: .milliseconds(10))
        #expect(timer.isFulfilled)
    }

    @Test(arguments: [0, -1, -Double.infinity, Double.nan])
    func nonPositiveIntervalsFireImmediately(seconds: Double) {
        let scheduler = TestClock()
        let timer = withPromiseClock(scheduler) { after(seconds: seconds) }
        #expect(timer.isPending)
        scheduler.advance(by: .nanoseconds(0))
        #expect(timer.isFulfilled)
    }

    @Test func hugeIntervalsNeverFire() {
        #expect(DispatchTimeInterval(clampingSeconds: .infinity) == .never)
        #expect(DispatchTimeInterval(clampingSeconds: 1e30) == .never)
        #expect(DispatchTimeInterval(clampingSeconds: 1.5) == .nanoseconds(1_500_000_000))
    }

    @Test(timeLimit(minutes: 1))
    func realClockFiresNoEarlierThanAsked() async {
        let started = DispatchTime.now()
        await after(.milliseconds(20)).async()
        #expect(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds >= 20_000_000)
    }
}
