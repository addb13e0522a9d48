using Microsoft.Extensions.Logging;

namespace Courier.Actors.Server;

/// <summary>The first-use warm-up's part in the broker: started by the first JetStream API request, not at start-up.</summary>
public sealed partial class Broker
{
    private readonly Lock _warmUpGate = new();
    private Task? _warmUp;

    /// <summary>The warm-up, once started (the host awaits it before the store directory can go away).</summary>
    public Task WarmUp
    {
        get
        {
            lock (_warmUpGate)
            {
                return _warmUp ?? Task.CompletedTask;
            }
        }
    }

    /// <summary>
    /// Starts the consumer journal's first-use work (see <see cref="Hosting.FirstUseWarmup"/>) on a pool
    /// thread, once; the JetStream API calls it at its first request. Not at start-up: the warm-up there
    /// took about 90 ms of CPU right after the ports file, from servers started together (a client
    /// library's test launcher: the slowest of eight wrote its ports file at 1.2-1.7 s with it, 1.0-1.15 s
    /// without) and from a core-only server's first clients. Started with the first request, it runs beside
    /// that request (a stream create, say), so the first consumer's journal round is done before a client
    /// asks for one.
    /// </summary>
    internal void StartWarmUp()
    {
        // Called once per JetStream API actor (at its first request): a lock is cheap enough here. Only
        // those call it, and the broker starts them only with JetStream on.
        if (System is not { } system)
        {
            return;
        }

        lock (_warmUpGate)
        {
            _warmUp ??= RunWarmUpAsync(system);
        }
    }

    private async Task RunWarmUpAsync(Akka.Actor.ActorSystem system)
    {
        var started = global::System.Diagnostics.Stopwatch.GetTimestamp();
        try
        {
            await Hosting.FirstUseWarmup.RunAsync(system, Options.EffectiveStoreDir).ConfigureAwait(false);
            WarmUpLog.Done(Logger, (long)global::System.Diagnostics.Stopwatch.GetElapsedTime(started).TotalMilliseconds);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or InvalidOperationException)
        {
            WarmUpLog.Failed(Logger, e.Message);
        }
    }

    private static partial class WarmUpLog
    {
        [LoggerMessage(Level = LogLevel.Debug, Message = "First-use warm-up stopped early: {Error}")]
        public static partial void Failed(ILogger logger, string error);

        [LoggerMessage(Level = LogLevel.Debug, Message = "First-use warm-up done in {Milliseconds} ms")]
        public static partial void Done(ILogger logger, long milliseconds);
    }
}
