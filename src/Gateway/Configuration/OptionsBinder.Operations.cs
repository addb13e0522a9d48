using Courier.Protocols;

namespace Courier.Gateway.Configuration;

/// <summary>Operational keys: log time and rotation, lame duck mode (nats-server's opts.go); Courier's idle_poll.</summary>
internal sealed partial class OptionsBinder
{
    private static readonly TimeSpan MinLameDuckDuration = TimeSpan.FromSeconds(30); // nats-server refuses shorter ones
    private static readonly TimeSpan MaxIdlePoll = TimeSpan.FromMilliseconds(10); // longer spins only burn CPU

    /// <summary>Binds <paramref name="entry"/> if it is one of these keys; false for any other key.</summary>
    private bool BindOperations(ConfigEntry entry)
    {
        switch (entry.Key.ToLowerInvariant())
        {
            case "logtime":
                if (TryBool(entry, out var b))
                {
                    _options.Logtime = b;
                }

                return true;
            case "logfile_size_limit" or "log_size_limit":
                if (TrySize(entry, out var size))
                {
                    _options.LogSizeLimit = size;
                }

                return true;
            case "lame_duck_duration":
                if (TryDuration(entry, out var duration))
                {
                    if (duration < MinLameDuckDuration)
                    {
                        Error(entry, $"invalid lame_duck_duration of {GoDuration.FormatUptime(duration)}, minimum is 30 seconds");
                    }
                    else
                    {
                        _options.LameDuckDuration = duration;
                    }
                }

                return true;
            case "lame_duck_grace_period":
                if (TryDuration(entry, out duration))
                {
                    if (duration < TimeSpan.Zero)
                    {
                        Error(entry, "invalid lame_duck_grace_period, needs to be positive");
                    }
                    else
                    {
                        _options.LameDuckGracePeriod = duration;
                    }
                }

                return true;
            case "idle_poll":
                if (TryDuration(entry, out duration))
                {
                    if (duration < TimeSpan.Zero || duration > MaxIdlePoll)
                    {
                        Error(entry, $"invalid idle_poll of {GoDuration.Format(duration.Ticks * 100)}, it must be between 0 (off) and 10ms");
                    }
                    else
                    {
                        _options.IdlePoll = duration;
                    }
                }

                return true;
            default:
                return false;
        }
    }
}
