// GraphQL over the indexed tables, for the test to read every balance.
import { db } from "ponder:api";
import schema from "ponder:schema";
import { Hono } from "hono";
import { graphql } from "ponder";

const app = new Hono();
app.use("/graphql", graphql({ db, schema }));

export default app;
