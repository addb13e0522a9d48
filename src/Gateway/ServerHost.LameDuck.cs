using Microsoft.Extensions.Logging;

namespace Courier.Gateway;

/// <summary>Lame duck mode (SIGUSR2, <c>--signal ldm</c>), as nats-server's <c>lameDuckMode</c>.</summary>
internal sealed partial class ServerHost
{
    private static readonly TimeSpan MaxCloseInterval = TimeSpan.FromSeconds(1); // nats-server sleeps at most this between closes

    private int _lameDuck;

    /// <summary>Whether lame duck mode has begun.</summary>
    public bool IsLameDuck => Volatile.Read(ref _lameDuck) != 0;

    /// <summary>
    /// Stops accepting on every client listener, sends the clients an INFO with <c>"ldm":true</c>,
    /// waits <c>lame_duck_grace_period</c>, then closes the clients spread over the rest of
    /// <c>lame_duck_duration</c>. Completes when the last client is closed: the caller then stops the
    /// server. A second call returns false at once.
    /// </summary>
    public async Task<bool> RunLameDuckModeAsync(CancellationToken cancellationToken)
    {
        if (Interlocked.Exchange(ref _lameDuck, 1) != 0)
        {
            return false;
        }

        LameDuckLog.Entering(_log);
        if (_listener is { } listener)
        {
            _listener = null;
            await listener.DisposeAsync().ConfigureAwait(false);
        }

        if (_webSocket is { } webSocket)
        {
            _webSocket = null;
            await webSocket.DisposeAsync().ConfigureAwait(false);
        }

        if (_mqttListener is { } mqtt)
        {
            _mqttListener = null;
            await mqtt.DisposeAsync().ConfigureAwait(false);
        }

        var clients = Broker.EnterLameDuckMode();
        if (clients.Count == 0)
        {
            return true;
        }

        // nats-server: the closes are spread over the duration less the grace period (at least a
        // second), at most a second apart; with more clients than nanoseconds they go in batches.
        var grace = _options.LameDuckGracePeriod;
        var spread = _options.LameDuckDuration - grace;
        if (spread <= TimeSpan.Zero)
        {
            spread = TimeSpan.FromSeconds(1);
        }

        var interval = spread / clients.Count;
        if (interval > MaxCloseInterval)
        {
            interval = MaxCloseInterval;
        }

        await Task.Delay(grace, cancellationToken).ConfigureAwait(false);
        LameDuckLog.Closing(_log);
        for (var i = 0; i < clients.Count; i++)
        {
            clients[i].RequestClose("Server Shutdown");
            if (i == clients.Count - 1)
            {
                break;
            }

            // A random pause of at least half the interval, as nats-server, so clients of several
            // servers in lame duck mode do not reconnect in step.
            var half = interval / 2;
            var pause = half + (interval - half) * Random.Shared.NextDouble();
            if (pause > TimeSpan.Zero)
            {
                await Task.Delay(pause, cancellationToken).ConfigureAwait(false);
            }
        }

        return true;
    }

    private static partial class LameDuckLog
    {
        [LoggerMessage(Level = LogLevel.Information, Message = "Entering lame duck mode, stop accepting new clients")]
        public static partial void Entering(ILogger logger);

        [LoggerMessage(Level = LogLevel.Information, Message = "Closing existing clients")]
        public static partial void Closing(ILogger logger);
    }
}
