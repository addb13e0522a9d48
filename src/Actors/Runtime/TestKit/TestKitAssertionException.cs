namespace Courier.Actors.Runtime.TestKit;

/// <summary>A TestKit expectation failed (test-framework neutral: xunit, NUnit and MSTest all report it as a failure).</summary>
public sealed class TestKitAssertionException : Exception
{
    /// <summary>Creates the exception.</summary>
    public TestKitAssertionException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with the last failure of a retried assertion.</summary>
    public TestKitAssertionException(string message, Exception? inner)
        : base(message, inner)
    {
    }
}
