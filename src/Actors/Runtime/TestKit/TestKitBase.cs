using System.Diagnostics;

namespace Courier.Actors.Runtime.TestKit;

/// <summary>
/// Base of an actor test class (Akka.NET <c>TestKit</c>): one <see cref="Sys"/> per test-class instance, a
/// default probe (<see cref="TestActor"/>) with its expectations, probes, and polling assertions. Dispose
/// terminates the system and fails if it does not stop in time. Framework-neutral: with xunit, derive the test
/// class from it (xunit creates and disposes one instance per test).
/// </summary>
public abstract class TestKitBase : IDisposable
{
    /// <summary>Expectations' default timeout: 3 s (long enough for a loaded CI machine, short enough to fail fast).</summary>
    internal static readonly TimeSpan DefaultTimeoutValue = TimeSpan.FromSeconds(3);

    // Poll interval of AwaitAssert/AwaitCondition: 10 ms, a small fraction of any sensible wait.
    private static readonly TimeSpan DefaultPollInterval = TimeSpan.FromMilliseconds(10);

    // How long Dispose waits for the system to stop: 10 s, generous for a test's actors' PostStop hooks.
    private static readonly TimeSpan TerminateTimeout = TimeSpan.FromSeconds(10);

    private readonly TestProbe _testProbe;
    private bool _disposed;

    /// <summary>Creates the system (named <paramref name="systemName"/>, default "test") and the default probe.</summary>
    protected TestKitBase(string? systemName = null, TimeSpan? defaultTimeout = null)
    {
        Sys = ActorSystem.Create(systemName ?? "test");
        DefaultTimeout = defaultTimeout ?? DefaultTimeoutValue;
        _testProbe = new TestProbe(Sys, DefaultTimeout, "testActor");
    }

    /// <summary>The system under test.</summary>
    public ActorSystem Sys { get; }

    /// <summary>Timeout of expectations that give none (3 s unless set in the constructor).</summary>
    public TimeSpan DefaultTimeout { get; }

    /// <summary>The default probe's actor.</summary>
    public IActorRef TestActor => _testProbe.Ref;

    /// <summary>The sender of the last message the default probe took.</summary>
    public IActorRef LastSender => _testProbe.LastSender;

    /// <summary>A new probe in <see cref="Sys"/>.</summary>
    public TestProbe CreateTestProbe(string? name = null) => new(Sys, DefaultTimeout, name);

    /// <inheritdoc cref="TestProbe.ExpectMsg{T}(TimeSpan?)"/>
    public T ExpectMsg<T>(TimeSpan? timeout = null) => _testProbe.ExpectMsg<T>(timeout);

    /// <inheritdoc cref="TestProbe.ExpectMsg{T}(Func{T, bool}, TimeSpan?)"/>
    public T ExpectMsg<T>(Func<T, bool> predicate, TimeSpan? timeout = null) => _testProbe.ExpectMsg(predicate, timeout);

    /// <inheritdoc cref="TestProbe.ExpectMsg{T}(T, TimeSpan?)"/>
    public T ExpectMsg<T>(T expected, TimeSpan? timeout = null) => _testProbe.ExpectMsg(expected, timeout);

    /// <inheritdoc cref="TestProbe.ExpectNoMsg"/>
    public void ExpectNoMsg(TimeSpan duration) => _testProbe.ExpectNoMsg(duration);

    /// <inheritdoc cref="TestProbe.ExpectTerminated"/>
    public Terminated ExpectTerminated(IActorRef target, TimeSpan? timeout = null) => _testProbe.ExpectTerminated(target, timeout);

    /// <inheritdoc cref="TestProbe.FishForMessage{T}(Func{T, bool}, TimeSpan?)"/>
    public T FishForMessage<T>(Func<T, bool> isMessage, TimeSpan? max = null) => _testProbe.FishForMessage(isMessage, max);

    /// <inheritdoc cref="TestProbe.Watch"/>
    public IActorRef Watch(IActorRef target) => _testProbe.Watch(target);

    /// <inheritdoc cref="TestProbe.Unwatch"/>
    public IActorRef Unwatch(IActorRef target) => _testProbe.Unwatch(target);

    /// <summary>Retries <paramref name="assertion"/> until it stops throwing, or throws its last failure after <paramref name="duration"/>.</summary>
    public void AwaitAssert(Action assertion, TimeSpan? duration = null, TimeSpan? interval = null)
    {
        ArgumentNullException.ThrowIfNull(assertion);
        var budget = duration ?? DefaultTimeout;
        var start = Stopwatch.GetTimestamp();
        while (true)
        {
            try
            {
                assertion();
                return;
            }
            catch (Exception) when (Stopwatch.GetElapsedTime(start) < budget)
            {
                // Not yet: retry after the interval.
            }
            catch (Exception e)
            {
                throw new TestKitAssertionException(
                    $"Assertion still failing after {budget.TotalMilliseconds:0} ms: {e.Message}", e);
            }

            Thread.Sleep(interval ?? DefaultPollInterval);
        }
    }

    /// <summary>Waits until <paramref name="condition"/> is true; throws after <paramref name="max"/>.</summary>
    public void AwaitCondition(Func<bool> condition, TimeSpan? max = null, TimeSpan? interval = null)
    {
        ArgumentNullException.ThrowIfNull(condition);
        var budget = max ?? DefaultTimeout;
        var start = Stopwatch.GetTimestamp();
        while (!condition())
        {
            if (Stopwatch.GetElapsedTime(start) >= budget)
            {
                throw new TestKitAssertionException($"Condition not met within {budget.TotalMilliseconds:0} ms.");
            }

            Thread.Sleep(interval ?? DefaultPollInterval);
        }
    }

    /// <summary>Terminates <see cref="Sys"/> and waits for it.</summary>
    public void Dispose()
    {
        Dispose(disposing: true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Terminates <see cref="Sys"/> and waits for it (10 s at most).</summary>
    /// <exception cref="TestKitAssertionException">The system did not stop in time.</exception>
    protected virtual void Dispose(bool disposing)
    {
        if (_disposed || !disposing)
        {
            return;
        }

        _disposed = true;
        if (!Sys.Terminate().Wait(TerminateTimeout))
        {
            throw new TestKitAssertionException(
                $"Actor system {Sys.Name} did not terminate within {TerminateTimeout.TotalSeconds:0} s.");
        }
    }
}
