namespace Courier.Integration.Tests.Infrastructure;

/// <summary>Subject prefixes unique to one test, so tests sharing a server never see each other's messages.</summary>
public static class Subjects
{
    private static int _counter;

    /// <summary>A fresh prefix like <c>it.7.3f9a2c1b</c>: a valid literal subject, usable as the head of others.</summary>
    public static string NewPrefix() =>
        $"it.{Interlocked.Increment(ref _counter)}.{Guid.NewGuid().ToString("N")[..8]}";
}
