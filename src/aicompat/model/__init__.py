"""The value model: reaching definitions, the evaluator, containers, guards and their forms,
loops and parametrized tests as scenarios, the project's own modules."""
