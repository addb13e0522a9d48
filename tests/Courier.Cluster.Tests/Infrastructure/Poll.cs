namespace Courier.Cluster.Tests.Infrastructure;

/// <summary>Bounded polling: waits for a condition instead of sleeping a fixed time.</summary>
public static class Poll
{
    /// <summary>Checks <paramref name="condition"/> every 50 ms until it holds or <paramref name="timeout"/> passes; returns whether it held.</summary>
    public static async Task<bool> UntilAsync(Func<bool> condition, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                return false;
            }

            await Task.Delay(50);
        }

        return true;
    }

    /// <summary>As <see cref="UntilAsync(Func{bool}, TimeSpan)"/> for a condition that must be awaited.</summary>
    public static async Task<bool> UntilAsync(Func<Task<bool>> condition, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (!await condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                return false;
            }

            await Task.Delay(50);
        }

        return true;
    }
}
